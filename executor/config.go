package executor

import (
	"cmp"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/internal/adaptive"
	"github.com/fusebox-go/fusebox/internal/stuck"
	"github.com/fusebox-go/fusebox/internal/validate"
	"github.com/fusebox-go/fusebox/throttle"
)

// The defaults of the zero values of Config, and the bounds of its fields.
const (
	defaultInvocationTimeout = time.Second
	// defaultResetTimeout is the breaker's own default for a zero
	// Breaker.ResetTimeout, needed here to check it against the timeouts.
	defaultResetTimeout = 5 * time.Second
)

// Config sets up the protection of one supplier. It is plain data: every
// field has a documented zero value, so per-supplier settings can come
// from a file.
type Config struct {
	// Slots is how many calls may run at once (the slots). 0 means 10.
	Slots int
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
	ck := &validate.Checker{Name: name}
	r := resolved{breaker: c.Breaker}
	r.slots = ck.Slots(c.Slots)
	if r.adapt = c.Adaptive.resolve(r.slots, ck); r.adapt.On {
		r.slots = r.adapt.Initial // the stuck criterion starts from it; the probes must fit in Min
	}
	r.queue = ck.Count("Queue", c.Queue)
	r.timeout = ck.Timeout("InvocationTimeout", c.InvocationTimeout, defaultInvocationTimeout)
	if r.adapt.On && r.timeout > adaptive.MaxTimeout {
		ck.Bad("InvocationTimeout must be at most %v with Adaptive sizing (its windows last a second at most), got %v", adaptive.MaxTimeout, r.timeout)
	}
	r.queueTimeout = ck.QueueTimeout(c.Queue, c.QueueTimeout, r.timeout)
	if r.throttle = c.Throttle; r.throttle != nil {
		if _, err := throttle.New(*r.throttle); err != nil {
			ck.Bad("Throttle: %v", err)
		}
	}
	r.lowWater = ck.LowWater(c.Queue, c.LowWater)
	r.stuck = c.Stuck.resolve(r.timeout, r.slots, ck.Bad)
	r.shares = sharePerMille(ck, c.CriticalShare)
	ck.Probes(c.Breaker.HalfOpenProbes, r.slots, r.queue)
	ck.Probes(c.Breaker.HalfOpenProbes, cmp.Or(r.adapt.Min, r.slots), r.queue)
	ck.ResetTimeout(cmp.Or(c.Breaker.ResetTimeout, defaultResetTimeout), r.timeout, r.queueTimeout, r.queue)
	if r.breaker.Name == "" {
		r.breaker.Name = name
	}
	r.shadow = c.Shadow
	if l := r.breaker.OnTransition; c.Shadow && l != nil {
		r.breaker.OnTransition = func(e breaker.Event) { e.Shadow = true; l(e) }
	}
	return r, errors.Join(ck.Errs...)
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
