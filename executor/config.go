package executor

import (
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/bulkhead"
)

// Defaults for the zero values of Config.
const (
	DefaultWorkers           = 10
	DefaultInvocationTimeout = time.Second
	// MaxWorkers bounds Workers, Queue and LowWater.
	MaxWorkers = math.MaxInt32
)

// Config sets up the protection of one supplier. It is plain data: every
// field has a documented zero value, so per-dependency settings can come
// from a file.
type Config struct {
	// Workers is the number of calls that may run at once (the bulkhead's
	// slots). 0 means 10.
	Workers int
	// Queue is the number of calls that may wait for a slot when all are
	// busy. 0 means none: a call that finds no slot is rejected with
	// ErrSaturated (and trips the breaker if the bulkhead is stuck).
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
	// a panic in it is recovered. Setting it, or a Stuck other than the
	// zero value, makes the executor's counters (about 300 B) at New
	// rather than at its first call.
	OnBusy func(Busy)
}

// resolved is a Config with its defaults applied.
type resolved struct {
	workers, queue, lowWater int
	timeout, queueTimeout    time.Duration
	breaker                  breaker.Config
	stuck                    stuckPolicy
}

func (c Config) resolve(name string) (resolved, error) {
	r := resolved{workers: c.Workers, queue: c.Queue, lowWater: c.LowWater,
		timeout: c.InvocationTimeout, queueTimeout: c.QueueTimeout, breaker: c.Breaker}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("executor: %s: "+format, append([]any{name}, args...)...))
	}
	switch {
	case c.Workers < 0:
		bad("Workers must be ≥ 1, or 0 for the default %d, got %d", DefaultWorkers, c.Workers)
	case c.Workers > MaxWorkers:
		bad("Workers must be ≤ %d, got %d", MaxWorkers, c.Workers)
		r.workers = 0
	case c.Workers == 0:
		r.workers = DefaultWorkers
	}
	switch {
	case c.Queue < 0:
		bad("Queue must be ≥ 0, got %d", c.Queue)
	case c.Queue > MaxWorkers:
		bad("Queue must be ≤ %d, got %d", MaxWorkers, c.Queue)
		r.queue = 0
	}
	switch {
	case c.InvocationTimeout < 0 || c.InvocationTimeout > breaker.MaxTimeout:
		bad("InvocationTimeout must be in [0, %v], got %v", breaker.MaxTimeout, c.InvocationTimeout)
	case c.InvocationTimeout == 0:
		r.timeout = DefaultInvocationTimeout
	}
	switch {
	case c.QueueTimeout < 0 || c.QueueTimeout > breaker.MaxTimeout:
		bad("QueueTimeout must be in [0, %v], got %v", breaker.MaxTimeout, c.QueueTimeout)
	case c.Queue == 0 && c.QueueTimeout > 0:
		bad("QueueTimeout (%v) needs a Queue", c.QueueTimeout)
	case c.Queue > 0 && c.QueueTimeout == 0:
		r.queueTimeout = r.timeout
	}
	switch {
	case c.LowWater < 0 || c.LowWater > MaxWorkers:
		bad("LowWater must be in [0, %d), got %d", MaxWorkers, c.LowWater)
	case c.Queue == 0 && c.LowWater > 0:
		bad("LowWater (%d) needs a Queue", c.LowWater)
	case c.Queue > 0 && c.LowWater >= c.Queue:
		bad("LowWater (%d) must be below Queue (%d), or a full queue would count as drained", c.LowWater, c.Queue)
	case c.Queue > 0 && c.LowWater == 0:
		r.lowWater = c.Queue / 2
	}
	r.stuck = c.Stuck.resolve(r.timeout, r.workers, r.queue, bad)
	// A probe that finds no slot defers the half-open verdict. If the
	// probes alone can fill the slots (and queue places), some probe always
	// defers, the breaker re-opens, and the successes of the others come
	// too late to count: a healthy supplier would stay open for good.
	if p := c.Breaker.HalfOpenProbes; p > 0 && r.workers > 0 && r.queue >= 0 && int64(p) > int64(r.workers)+int64(r.queue) {
		bad("Breaker.HalfOpenProbes (%d) must not exceed Workers (%d) + Queue (%d): "+
			"a probe that finds no slot re-opens the breaker, so too many probes could never close it",
			p, r.workers, c.Queue)
	}
	if r.breaker.Name == "" {
		r.breaker.Name = name
	}

	reset := c.Breaker.ResetTimeout
	if reset == 0 {
		reset = breaker.DefaultResetTimeout
	}
	if limit := r.timeout + r.queueTimeout; reset > 0 && reset <= limit {
		if r.queue > 0 {
			bad("Breaker.ResetTimeout (%v) must exceed InvocationTimeout (%v) + QueueTimeout (%v) = %v: "+
				"a probe admitted when the breaker half-opens could find every slot still held, or queued behind, calls admitted before the trip",
				reset, r.timeout, r.queueTimeout, limit)
		} else {
			bad("Breaker.ResetTimeout (%v) must exceed InvocationTimeout (%v): "+
				"a probe admitted when the breaker half-opens could find every slot still held by calls admitted before the trip",
				reset, r.timeout)
		}
	}
	return r, errors.Join(errs...)
}

// Validate reports every problem New would report for an executor named
// name with this configuration, without making one.
func (c Config) Validate(name string) error {
	_, err := c.build(name)
	return err
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
	bh, err := bulkhead.New(bulkhead.Config{Slots: r.workers, Queue: r.queue, LowWater: r.lowWater})
	if err != nil {
		return parts{}, fmt.Errorf("executor: %s: %w", name, err) // resolve checked every field: not reached
	}
	return parts{r, br, bh}, nil
}

type parts struct {
	resolved
	br *breaker.Breaker
	bh *bulkhead.Bulkhead
}
