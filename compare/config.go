package compare

import (
	"fmt"
	"time"
)

// Settings is the one configuration every library is given, each in its own
// terms (see Describe).
type Settings struct {
	// Slots bounds the calls that may run at once for one supplier: the
	// bulkhead, pool or MaxConcurrentRequests.
	Slots int
	// Timeout bounds one call (the invocation timeout).
	Timeout time.Duration
	// Failures is the number of consecutive failures that opens a breaker.
	Failures int
	// Reset is how long a breaker stays open before it lets a probe through.
	Reset time.Duration
}

// BenchSettings are used by the benchmarks: pools large enough that a
// trivial call is never refused, timeouts that never fire.
var BenchSettings = Settings{Slots: 1024, Timeout: time.Second, Failures: 5, Reset: 2 * time.Second}

// ScenarioSettings returns the settings of the behaviour scenarios for the
// invocation timeout t: 10 slots, 5 consecutive failures, a reset timeout
// of 2t (fusebox insists that it exceed the invocation timeout).
func ScenarioSettings(t time.Duration) Settings {
	return Settings{Slots: 10, Timeout: t, Failures: 5, Reset: 2 * t}
}

// millis converts d to whole milliseconds for hystrix-go, at least 1.
func millis(d time.Duration) int {
	return max(1, int((d+time.Millisecond-1)/time.Millisecond))
}

// Describe says how each library is configured from s: the equivalent
// settings, and the places where a library cannot express one of them.
func Describe(s Settings) []string {
	return []string{
		fmt.Sprintf("fusebox: executor.Config{Slots: %d, Queue: 0, InvocationTimeout: %v, Breaker: {ConsecutiveFailures: %d, ResetTimeout: %v, HalfOpenProbes: 1}}; fusebox-breaker is breaker.New with the same Breaker config, the call getting a context with a %v deadline.",
			s.Slots, s.Timeout, s.Failures, s.Reset, s.Timeout),
		fmt.Sprintf("gobreaker v2: Settings{MaxRequests: 1, Timeout: %v, ReadyToTrip: ConsecutiveFailures >= %d}, Execute (gobreaker-twostep: TwoStepCircuitBreaker.Allow); no bulkhead and no call timeout: the call gets a context with a %v deadline.",
			s.Reset, s.Failures, s.Timeout),
		fmt.Sprintf("failsafe-go: failsafe.With(circuitbreaker{WithFailureThreshold(%d), WithSuccessThreshold(1), WithDelay(%v)}, bulkhead.New(%d) (no max wait), timeout.New(%v)), GetWithExecution with exec.Context(); failsafe-go-async is GetAsyncWithExecution awaited on Done(); failsafe-go-permit is the breaker's TryAcquirePermit/RecordSuccess without the executor.",
			s.Failures, s.Reset, s.Slots, s.Timeout),
		fmt.Sprintf("hystrix-go: CommandConfig{Timeout: %d ms, MaxConcurrentRequests: %d, RequestVolumeThreshold: %d, ErrorPercentThreshold: 50, SleepWindow: %d ms}, DoC (hystrix-go-async: GoC with an output channel). It has no consecutive-failure rule: it opens when, over a rolling 10 s window, at least %d requests were seen and at least 50%% were errors (failures, timeouts, rejections). Its timeout does not cancel the function's context.",
			millis(s.Timeout), s.Slots, s.Failures, millis(s.Reset), s.Failures),
		fmt.Sprintf("go-resiliency: breaker.New(%d, 1, %v), Run; the call gets a context with a %v deadline. Its error count is not consecutive: errors within the timeout of each other count, successes in Closed do not reset it.",
			s.Failures, s.Reset, s.Timeout),
		fmt.Sprintf("go-zero: core/breaker.NewBreaker() at its defaults (it has no settings: Google's SRE client-side throttle, a 10 s window of 40 buckets, K 1.5, 5 requests of protection, and one call let through when none passed for a second), DoCtx; no bulkhead and no call timeout: the call gets a context with a %v deadline. It never refuses every call: it drops each with a probability that grows with the failures and drops in its window.",
			s.Timeout),
		fmt.Sprintf("sentinel-golang: api.Entry(resource, WithTrafficType(Outbound)), TraceError on failure, Exit; one circuitbreaker.Rule per resource, Strategy ErrorCount (the zero value is SlowRequestRatio, a slow-call rule; ErrorCount is the one that counts failures), Threshold %d, MinRequestAmount %d, RetryTimeoutMs %d, StatIntervalMs 5000 in 10 buckets as in its examples, one probe; no bulkhead and no call timeout: the call gets a context with a %v deadline. Without InitDefault, which adds metric logs, system-load collection and a cached clock, each on a goroutine that never stops. sentinel-golang-breakerchain gives Entry a slot chain of the breaker's slots alone (WithSlotChain), without the flow, isolation, hot-spot and system checks.",
			s.Failures, s.Failures, millis(s.Reset), s.Timeout),
		fmt.Sprintf("ants: one ants.NewPool(%d, WithNonblocking(true)) per supplier, Submit + a buffered channel; no breaker, no timeout.", s.Slots),
		"go: a bare goroutine per call + a buffered channel; no bound, no breaker, no timeout.",
		fmt.Sprintf("go-timeout: a bare goroutine per call + context.WithTimeout(%v) + a buffered channel, the caller released at the deadline; no bound, no breaker.", s.Timeout),
		fmt.Sprintf("fusebox-ants: fusebox's configuration, in a Group whose Runner (the antspool module) starts the calls on one ants.NewPool(%d, WithNonblocking(true), WithDisablePurge(true)) instead of a go statement each.", 100*s.Slots),
	}
}
