package executor

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/throttle"
)

// The defaults of the zero values of Config, and the bounds of its fields.
const (
	defaultSlots             = 10
	defaultInvocationTimeout = time.Second
	// defaultResetTimeout is the breaker's own default for a zero
	// Breaker.ResetTimeout, needed here to check it against the timeouts.
	defaultResetTimeout = 5 * time.Second
	// maxSize bounds Workers, Queue and LowWater (the bulkhead's counts are
	// 32 bits wide).
	maxSize = math.MaxInt32
	// maxTimeout bounds the timeouts, as the breaker bounds its own.
	maxTimeout = 100 * 365 * 24 * time.Hour
)

// Config sets up the protection of one supplier. It is plain data: every
// field has a documented zero value, so per-supplier settings can come
// from a file.
type Config struct {
	// Workers is the number of calls that may run at once (the bulkhead's
	// slots). 0 means 10.
	Workers int
	// Queue is the number of calls that may wait for a slot when all are
	// busy. 0 means none: a call that finds no slot is rejected with
	// ErrBusy, or ErrSaturated if the bulkhead is stuck (then the breaker
	// trips).
	Queue int
	// QueueTimeout bounds the wait in the queue; a call that waited this
	// long without a slot resolves with ErrQueueTimeout and never runs.
	// 0 means InvocationTimeout. Only with Queue > 0.
	QueueTimeout time.Duration
	// LowWater is the queue level at or below which a breaker opened on a
	// full queue closes again, without a probe. 0 means Queue/2. Only with
	// Queue > 0; it must be below Queue.
	LowWater int
	// InvocationTimeout bounds each call, counted from the moment it starts
	// running: its context's deadline, and the moment its future resolves
	// with ErrTimeout even if the function ignores the context. 0 means 1s.
	InvocationTimeout time.Duration
	// Breaker configures the supplier's breaker. Its zero value is 5
	// consecutive failures and a 5s reset timeout. ResetTimeout must exceed
	// InvocationTimeout (+ QueueTimeout with a queue): that is what
	// guarantees a half-open probe a free slot. Breaker.Name defaults to
	// the executor's name.
	Breaker breaker.Config
	// Stuck decides whether a call that finds the bulkhead full trips the
	// breaker (its calls are stuck) or is refused alone (they are busy).
	// The zero value judges by the age of the oldest call against the
	// supplier's recent latency; see StuckConfig.
	Stuck StuckConfig
	// OnBusy, if set, is told of every busy refusal (see Busy and
	// LogBusy). It runs on the refused caller's goroutine: keep it short;
	// a panic in it is recovered. Setting it, a Stuck other than the zero
	// value, or Shadow makes the executor's counters (about 350 B) at New
	// rather than at its first call.
	OnBusy func(Busy)
	// Shadow evaluates every rule and refuses nothing: the breaker trips,
	// probes and closes as it would, its events say Shadow, and the calls
	// it would have refused (open, busy, stuck, a full queue) run all the
	// same, outside the bulkhead, counted in Stats.Shadowed by reason
	// (OnBusy is told of the busy refusals it would have made). For
	// a rollout: watch what enforce mode would do, then switch with
	// Reconfigure (see docs/shadow.md). false enforces.
	Shadow bool

	// Throttle, if set, adds client-side adaptive throttling for a
	// supplier that is overloaded rather than dead (package throttle):
	// once it accepts fewer calls than it is sent, a share of the calls,
	// sheddable ones first, is refused locally with ErrThrottled, so that
	// what is sent tracks what it accepts. A throttled call is never the
	// supplier's failure, and a hang still trips the breaker at once.
	// nil means off. Reconfigure starts it afresh.
	Throttle *throttle.Config

	// CriticalShare is the share of the slots kept for calls whose context
	// carries priority.Critical; sheddable calls (priority.Sheddable) may
	// hold at most half of the other slots, so a background burst leaves
	// room for default work and critical work alike (see package
	// priority). A call over its priority's share is refused as busy
	// (RejectedBusy). It must be in [0, 0.9]; 0 means priorities off:
	// every call is admitted alike, and priorities are only counted
	// (Stats.RejectedByPriority).
	CriticalShare float64

	// Adaptive lets the bulkhead size itself between Adaptive.Min and
	// Adaptive.Max (Stats.Workers is the limit in force); its zero value
	// is off: Workers slots. See AdaptiveConfig.
	Adaptive AdaptiveConfig
}

// resolved is a Config with its defaults applied.
type resolved struct {
	slots, queue, lowWater int
	timeout, queueTimeout  time.Duration
	breaker                breaker.Config
	stuck                  stuckPolicy
	shadow                 bool
	throttle               *throttle.Config
	shares                 uint32 // CriticalShare, per mille
	adapt                  adaptSet
}

// resolve checks c and applies the defaults. Every rule has a validator
// of its own, and every invalid field is reported, by name.
func (c Config) resolve(name string) (resolved, error) {
	ck := &checker{name: name}
	r := resolved{breaker: c.Breaker}
	r.slots = ck.slots(c.Workers)
	if r.adapt = c.Adaptive.resolve(r.slots, ck); r.adapt.on {
		r.slots = r.adapt.initial // the stuck criterion starts from it; the probes must fit in Min
	}
	r.queue = ck.count("Queue", c.Queue)
	r.timeout = ck.timeout("InvocationTimeout", c.InvocationTimeout, defaultInvocationTimeout)
	if r.adapt.on && r.timeout > adaptMaxTimeout {
		ck.bad("InvocationTimeout must be at most %v with Adaptive sizing (its windows last a second at most), got %v", adaptMaxTimeout, r.timeout)
	}
	r.queueTimeout = ck.queueTimeout(c.Queue, c.QueueTimeout, r.timeout)
	if r.throttle = c.Throttle; r.throttle != nil {
		if _, err := throttle.New(*r.throttle); err != nil {
			ck.bad("Throttle: %v", err)
		}
	}
	r.lowWater = ck.lowWater(c.Queue, c.LowWater)
	r.stuck = c.Stuck.resolve(r.timeout, r.slots, r.queue, ck.bad)
	r.shares = ck.sharePerMille(c.CriticalShare)
	ck.probes(c.Breaker.HalfOpenProbes, r.slots, r.queue)
	ck.probes(c.Breaker.HalfOpenProbes, cmp.Or(r.adapt.minL, r.slots), r.queue)
	ck.resetTimeout(cmp.Or(c.Breaker.ResetTimeout, defaultResetTimeout), r)
	if r.breaker.Name == "" {
		r.breaker.Name = name
	}
	r.shadow = c.Shadow
	if l := r.breaker.OnTransition; c.Shadow && l != nil {
		r.breaker.OnTransition = func(e breaker.Event) { e.Shadow = true; l(e) }
	}
	return r, errors.Join(ck.errs...)
}

// checker collects the errors of resolve's validators.
type checker struct {
	name string
	errs []error
}

func (ck *checker) bad(format string, args ...any) {
	ck.errs = append(ck.errs, fmt.Errorf("executor: %s: "+format, append([]any{ck.name}, args...)...))
}

func (ck *checker) slots(n int) int {
	switch {
	case n < 0:
		ck.bad("Workers must be ≥ 1, or 0 for the default %d, got %d", defaultSlots, n)
	case n > maxSize:
		ck.bad("Workers must be ≤ %d, got %d", maxSize, n)
		return 0
	case n == 0:
		return defaultSlots
	}
	return n
}

// count checks a size that may be 0.
func (ck *checker) count(field string, n int) int {
	switch {
	case n < 0:
		ck.bad("%s must be ≥ 0, got %d", field, n)
	case n > maxSize:
		ck.bad("%s must be ≤ %d, got %d", field, maxSize, n)
		return 0
	}
	return n
}

func (ck *checker) timeout(field string, d, def time.Duration) time.Duration {
	if d < 0 || d > maxTimeout {
		ck.bad("%s must be in [0, %v], got %v", field, maxTimeout, d)
	}
	return cmp.Or(d, def)
}

func (ck *checker) queueTimeout(queue int, d, invocation time.Duration) time.Duration {
	switch {
	case d < 0 || d > maxTimeout:
		ck.bad("QueueTimeout must be in [0, %v], got %v", maxTimeout, d)
	case queue == 0 && d > 0:
		ck.bad("QueueTimeout (%v) needs a Queue", d)
	case queue > 0 && d == 0:
		return invocation
	}
	return d
}

func (ck *checker) lowWater(queue, low int) int {
	switch {
	case low < 0 || low > maxSize:
		ck.bad("LowWater must be in [0, %d), got %d", maxSize, low)
	case queue == 0 && low > 0:
		ck.bad("LowWater (%d) needs a Queue", low)
	case queue > 0 && low >= queue:
		ck.bad("LowWater (%d) must be below Queue (%d), or a full queue would count as drained", low, queue)
	case queue > 0 && low == 0:
		return queue / 2
	}
	return low
}

// probes checks that the half-open probes cannot fill the bulkhead. A probe
// that finds no slot defers the half-open verdict. If the probes alone can
// fill the slots (and queue places), some probe always defers, the breaker
// re-opens, and the successes of the others come too late to count: a
// healthy supplier would stay open for good.
func (ck *checker) probes(p, slots, queue int) {
	if p > 0 && slots > 0 && queue >= 0 && int64(p) > int64(slots)+int64(queue) {
		ck.bad("Breaker.HalfOpenProbes (%d) must not exceed Workers (%d) + Queue (%d): "+
			"a probe that finds no slot re-opens the breaker, so too many probes could never close it",
			p, slots, queue)
	}
}

// resetTimeout checks the rule that guarantees a half-open probe a slot:
// the open period outlasts every call admitted before the trip.
func (ck *checker) resetTimeout(reset time.Duration, r resolved) {
	limit := r.timeout + r.queueTimeout
	switch {
	case reset <= 0 || reset > limit:
		// Fine, or a ResetTimeout the breaker itself refuses.
	case r.queue > 0:
		ck.bad("Breaker.ResetTimeout (%v) must exceed InvocationTimeout (%v) + QueueTimeout (%v) = %v: "+
			"a probe admitted when the breaker half-opens could find every slot still held, or queued behind, calls admitted before the trip",
			reset, r.timeout, r.queueTimeout, limit)
	default:
		ck.bad("Breaker.ResetTimeout (%v) must exceed InvocationTimeout (%v): "+
			"a probe admitted when the breaker half-opens could find every slot still held by calls admitted before the trip",
			reset, r.timeout)
	}
}

// build validates c completely, the breaker's settings included, and
// returns the parts of an executor. The error names every invalid field at
// once, the executor's and the breaker's.
func (c Config) build(name string) (parts, error) {
	if name == "" {
		// The name is how metrics, logs, events and a Group tell suppliers
		// apart; an empty one would read "executor: : ..." everywhere.
		return parts{}, errors.New("executor: the supplier name must not be empty")
	}
	if len(name) > MaxNameLen {
		// The name labels metrics, logs, events and errors, and the fleet
		// sends it: a bound keeps each of them small.
		return parts{}, fmt.Errorf("executor: the supplier name %q is longer than MaxNameLen (%d bytes)", shortName(name), MaxNameLen)
	}
	if !utf8.ValidString(name) {
		// The name labels metrics, logs and events; exporters such as
		// Prometheus refuse label values that are not UTF-8.
		return parts{}, fmt.Errorf("executor: the name %q is not valid UTF-8", name)
	}
	r, rerr := c.resolve(name)
	br, berr := breaker.New(r.breaker)
	if berr != nil {
		berr = fmt.Errorf("executor: %s: %w", name, berr)
	}
	if err := errors.Join(rerr, berr); err != nil {
		return parts{}, err
	}
	return parts{r, br}, nil
}

type parts struct {
	resolved
	br *breaker.Breaker
}
