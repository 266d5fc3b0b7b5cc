package executor

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/internal/adaptive"
	"github.com/fusebox-go/fusebox/internal/stuck"
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
	// Workers is how many calls may run at once (the slots). 0 means 10.
	Workers int
	// Queue is how many calls may wait for a slot. 0 means none.
	Queue int
	// QueueTimeout bounds the wait in the queue. 0 means InvocationTimeout.
	QueueTimeout time.Duration
	// LowWater: a breaker opened on a full queue closes at this level. 0: Queue/2.
	LowWater int
	// InvocationTimeout bounds each call from its start. 0 means 1s.
	InvocationTimeout time.Duration
	// Breaker: ResetTimeout must exceed InvocationTimeout (+ QueueTimeout).
	Breaker breaker.Config
	// Stuck decides when a full bulkhead trips the breaker (StuckConfig).
	Stuck StuckConfig
	// OnBusy, if set, is told of every busy refusal (see LogBusy).
	OnBusy func(Busy)
	// Shadow evaluates every rule but refuses nothing (docs/shadow.md).
	Shadow bool
	// Throttle, if set, throttles calls to an overloaded supplier. nil: off.
	Throttle *throttle.Config
	// CriticalShare of the slots is kept for priority.Critical calls; 0: off.
	CriticalShare float64
	// Adaptive lets the bulkhead size itself; its zero value is off.
	Adaptive AdaptiveConfig
}

// resolved is a Config with its defaults applied.
type resolved struct {
	slots, queue, lowWater int
	timeout, queueTimeout  time.Duration
	breaker                breaker.Config
	stuck                  stuck.Policy
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
	if r.adapt = c.Adaptive.resolve(r.slots, ck); r.adapt.On {
		r.slots = r.adapt.Initial // the stuck criterion starts from it; the probes must fit in Min
	}
	r.queue = ck.count("Queue", c.Queue)
	r.timeout = ck.timeout("InvocationTimeout", c.InvocationTimeout, defaultInvocationTimeout)
	if r.adapt.On && r.timeout > adaptive.MaxTimeout {
		ck.bad("InvocationTimeout must be at most %v with Adaptive sizing (its windows last a second at most), got %v", adaptive.MaxTimeout, r.timeout)
	}
	r.queueTimeout = ck.queueTimeout(c.Queue, c.QueueTimeout, r.timeout)
	if r.throttle = c.Throttle; r.throttle != nil {
		if _, err := throttle.New(*r.throttle); err != nil {
			ck.bad("Throttle: %v", err)
		}
	}
	r.lowWater = ck.lowWater(c.Queue, c.LowWater)
	r.stuck = c.Stuck.resolve(r.timeout, r.slots, ck.bad)
	r.shares = ck.sharePerMille(c.CriticalShare)
	ck.probes(c.Breaker.HalfOpenProbes, r.slots, r.queue)
	ck.probes(c.Breaker.HalfOpenProbes, cmp.Or(r.adapt.Min, r.slots), r.queue)
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
