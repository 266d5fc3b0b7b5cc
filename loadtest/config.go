package loadtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fusebox-go/fusebox/executor"
)

// Mode is a way of protecting the shop's payment call.
type Mode string

// The protection modes. They run on identical traffic.
const (
	// ModeTimeout gives the payment call its invocation timeout and nothing
	// else.
	ModeTimeout Mode = "timeout"
	// ModeBreaker wraps the call (and its timeout) in a breaker from package
	// breaker with a consecutive-failure rule; there is no bulkhead.
	ModeBreaker Mode = "breaker"
	// ModeFusebox runs the call on an executor from package executor: a
	// bulkhead whose saturation trips the breaker, the same consecutive rule,
	// and the invocation timeout.
	ModeFusebox Mode = "fusebox"
	// ModeShadow is ModeFusebox in shadow mode (executor.Config.Shadow):
	// every rule evaluated, nothing refused. Its report says when the
	// breaker would have opened and what it would have refused
	// (Summary.Refusals); the shop's workers fare as with ModeTimeout. Not
	// in Modes: name it to run it.
	ModeShadow Mode = "shadow"
)

// Modes lists every mode, in the order reports show them.
var Modes = []Mode{ModeTimeout, ModeBreaker, ModeFusebox}

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	for _, m := range append(Modes, ModeShadow) {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("loadtest: unknown mode %q (want timeout, breaker, fusebox or shadow)", s)
}

// Transport says how requests travel between load generator, shop and
// supplier.
type Transport string

// The transports.
const (
	// InProcess makes every request a function call. Under testing/synctest
	// it runs in virtual time.
	InProcess Transport = "inproc"
	// HTTP runs the shop and the supplier as HTTP servers on 127.0.0.1 and
	// sends every request over loopback.
	HTTP Transport = "http"
)

// ParseTransport returns the transport named s.
func ParseTransport(s string) (Transport, error) {
	switch Transport(s) {
	case InProcess, HTTP:
		return Transport(s), nil
	}
	return "", fmt.Errorf("loadtest: unknown transport %q (want http or inproc)", s)
}

// Progress is what a run reports while it runs (about every
// Config.ProgressEvery of wall time).
type Progress struct {
	Run      string        // the mode or queue variant
	At       time.Duration // scenario time reached
	Duration time.Duration // scenario time the run lasts
	Line     string        // the current state in a few words
}

// ExhaustionConfig describes the worker-exhaustion scenario. All durations
// are scenario time. Zero values are not defaults (an outage may start at 0,
// a run may have no queue): start from DefaultExhaustion.
type ExhaustionConfig struct {
	Workers         int           // shop request workers
	CatalogRate     float64       // catalog requests per second, evenly spaced
	CatalogLatency  time.Duration // work a catalog request does while it holds a worker
	PaymentRate     float64       // payment requests per second, evenly spaced
	SupplierLatency time.Duration // the healthy supplier's answer time
	OutageStart     time.Duration // the supplier hangs from here ...
	OutageEnd       time.Duration // ... to here (calls that arrived hung stay hung)
	Duration        time.Duration // length of each mode's run

	InvocationTimeout time.Duration // every mode: the payment call's timeout
	Threshold         int           // breaker, fusebox: consecutive failures that trip
	ResetTimeout      time.Duration // breaker, fusebox: open period before a probe
	Bulkhead          int           // fusebox: slots for payment calls
	Queue             int           // fusebox: places to wait for a slot (0: none)
	QueueTimeout      time.Duration // fusebox: bound on that wait (0: InvocationTimeout)

	// BusinessErrors is the share of healthy payment calls the supplier
	// refuses, well-formed ("card declined", after SupplierLatency like a
	// payment), in [0, 1]. Each call
	// is declined at random with this probability, from Seed, so runs are
	// reproducible and runs of declines happen as they do in real traffic.
	BusinessErrors float64
	// BusinessErrorsEven declines exactly every 1/BusinessErrors-th call
	// instead: no two declines closer than that, so at 1/3 five in a row
	// never happen.
	BusinessErrorsEven bool
	// Seed seeds the random business errors.
	Seed uint64
	// BusinessErrorsFail counts those refusals as failures on the breaker;
	// false counts them as successes (the supplier answered correctly).
	BusinessErrorsFail bool

	// OnExecutor, if set, receives the fusebox mode's executor before its
	// traffic starts (to show it on a dashboard, say); the run closes it.
	OnExecutor func(*executor.Executor)
	// onPayment, if set, is told the scenario time at which each payment
	// reaches the fusebox or shadow mode's executor (tests replay it).
	onPayment func(at time.Duration)

	Transport     Transport
	Speed         float64        // scenario seconds per wall second (≥ 1); 1 under testing/synctest
	ProgressEvery time.Duration  // wall time between Progress calls
	Progress      func(Progress) // nil: no progress
}

// DefaultExhaustion returns the scenario of docs/design.md: 100 shop workers,
// catalog 50/s, payments 10/s with a 30 s timeout, a supplier that hangs from
// 30 s to 120 s of a 180 s run, a breaker that trips after 5 consecutive
// failures, and a bulkhead of 10 slots. The reset timeout is 35 s because
// executor.New refuses one that does not exceed the invocation timeout (a
// half-open probe must be sure to find a free slot).
func DefaultExhaustion() ExhaustionConfig {
	return ExhaustionConfig{
		Workers:           100,
		CatalogRate:       50,
		CatalogLatency:    10 * time.Millisecond,
		PaymentRate:       10,
		SupplierLatency:   100 * time.Millisecond,
		OutageStart:       30 * time.Second,
		OutageEnd:         120 * time.Second,
		Duration:          180 * time.Second,
		InvocationTimeout: 30 * time.Second,
		Threshold:         5,
		ResetTimeout:      35 * time.Second,
		Bulkhead:          10,
		Transport:         InProcess,
		Seed:              1,
		Speed:             1,
		ProgressEvery:     3 * time.Second,
	}
}

// maxRequests bounds the requests of one stream of one run.
const maxRequests = 10_000_000

// Validate reports every invalid field.
func (c ExhaustionConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("loadtest: "+format, args...)) }
	if c.Workers < 1 {
		bad("Workers must be ≥ 1, got %d", c.Workers)
	}
	errs = append(errs, checkRate("CatalogRate", c.CatalogRate, c.Duration), checkRate("PaymentRate", c.PaymentRate, c.Duration))
	if c.CatalogLatency < 0 || c.SupplierLatency < 0 {
		bad("latencies must be ≥ 0, got catalog %v, supplier %v", c.CatalogLatency, c.SupplierLatency)
	}
	if c.Duration < time.Second {
		bad("Duration must be ≥ 1s, got %v", c.Duration)
	}
	if c.OutageStart < 0 || c.OutageEnd < c.OutageStart {
		bad("the outage must satisfy 0 ≤ start ≤ end, got %v to %v", c.OutageStart, c.OutageEnd)
	}
	if c.InvocationTimeout <= 0 {
		bad("InvocationTimeout must be > 0, got %v", c.InvocationTimeout)
	}
	if c.Threshold < 1 {
		bad("Threshold must be ≥ 1, got %d", c.Threshold)
	}
	if c.ResetTimeout <= 0 {
		bad("ResetTimeout must be > 0, got %v", c.ResetTimeout)
	}
	if c.Bulkhead < 1 {
		bad("Bulkhead must be ≥ 1, got %d", c.Bulkhead)
	}
	if c.Queue < 0 || c.QueueTimeout < 0 {
		bad("Queue and QueueTimeout must be ≥ 0, got %d and %v", c.Queue, c.QueueTimeout)
	}
	if c.BusinessErrors < 0 || c.BusinessErrors > 1 || math.IsNaN(c.BusinessErrors) {
		bad("BusinessErrors must be in [0, 1], got %v", c.BusinessErrors)
	}
	errs = append(errs, checkTransport(c.Transport, c.Speed))
	if errors.Join(errs...) == nil {
		// The executor is the authority on its configuration (a reset timeout
		// must exceed invocation + queue timeout); ask it in scenario time,
		// so that its message names the durations the user gave.
		errs = append(errs, checkExecutor("payments", c.executorConfig(clock{speed: 1}, nil)))
	}
	return errors.Join(errs...)
}

// checkExecutor reports what executor.New thinks of cfg. The executor it
// makes has started nothing; Close releases it at once.
func checkExecutor(name string, cfg executor.Config) error {
	ex, err := executor.New(name, cfg)
	if err != nil {
		return err
	}
	return ex.Close(context.Background())
}

func checkRate(name string, rate float64, d time.Duration) error {
	if !(rate > 0) || math.IsInf(rate, 0) || rate*d.Seconds() > maxRequests {
		return fmt.Errorf("loadtest: %s must be > 0 and send at most %d requests in a run, got %v/s", name, maxRequests, rate)
	}
	return nil
}

func checkTransport(t Transport, speed float64) error {
	if t != InProcess && t != HTTP {
		return fmt.Errorf("loadtest: unknown Transport %q", t)
	}
	if !(speed >= 1) || math.IsInf(speed, 0) {
		return fmt.Errorf("loadtest: Speed must be ≥ 1, got %v", speed)
	}
	return nil
}

// settings lists the configuration for reports, durations as text.
func (c ExhaustionConfig) settings() map[string]any {
	return map[string]any{
		"workers": c.Workers, "catalog_rate": c.CatalogRate, "catalog_latency": c.CatalogLatency.String(),
		"payment_rate": c.PaymentRate, "supplier_latency": c.SupplierLatency.String(),
		"outage_start": c.OutageStart.String(), "outage_end": c.OutageEnd.String(), "duration": c.Duration.String(),
		"invocation_timeout": c.InvocationTimeout.String(), "threshold": c.Threshold,
		"reset_timeout": c.ResetTimeout.String(), "bulkhead": c.Bulkhead, "queue": c.Queue,
		"queue_timeout": c.QueueTimeout.String(), "business_errors": c.BusinessErrors, "business_errors_even": c.BusinessErrorsEven, "seed": c.Seed,
		"business_errors_fail": c.BusinessErrorsFail, "transport": string(c.Transport),
		"speed": c.Speed,
	}
}
