// Package validate holds the checks of the executor's Config fields: each
// reports a bad field by its name in Config, through a Checker that
// collects every error at once, and returns the value in force (a zero
// field's default). The rules behind them are in docs/design.md.
package validate

import (
	"cmp"
	"fmt"
	"math"
	"time"
)

// The bounds of the executor's settings.
const (
	// DefaultSlots is Slots' zero value.
	DefaultSlots = 10
	// MaxSize bounds Slots, Queue and LowWater (the bulkhead's counts
	// are 32 bits).
	MaxSize = math.MaxInt32
	// MaxTimeout bounds the timeouts, as the breaker bounds its own.
	MaxTimeout = 100 * 365 * 24 * time.Hour
)

// Checker collects the errors of the checks of one supplier's Config.
type Checker struct {
	Name string  // the supplier, named in every error
	Errs []error // one per bad field, in the order found
}

// Bad records a bad field: format names it and says what it must be.
func (ck *Checker) Bad(format string, args ...any) {
	ck.Errs = append(ck.Errs, fmt.Errorf("executor: %s: "+format, append([]any{ck.Name}, args...)...))
}

// Slots checks Slots: 0 means DefaultSlots.
func (ck *Checker) Slots(n int) int {
	switch {
	case n < 0:
		ck.Bad("Slots must be ≥ 1, or 0 for the default %d, got %d", DefaultSlots, n)
	case n > MaxSize:
		ck.Bad("Slots must be ≤ %d, got %d", MaxSize, n)
		return 0
	case n == 0:
		return DefaultSlots
	}
	return n
}

// Count checks a size that may be 0.
func (ck *Checker) Count(field string, n int) int {
	switch {
	case n < 0:
		ck.Bad("%s must be ≥ 0, got %d", field, n)
	case n > MaxSize:
		ck.Bad("%s must be ≤ %d, got %d", field, MaxSize, n)
		return 0
	}
	return n
}

// Timeout checks a timeout: 0 means def.
func (ck *Checker) Timeout(field string, d, def time.Duration) time.Duration {
	if d < 0 || d > MaxTimeout {
		ck.Bad("%s must be in [0, %v], got %v", field, MaxTimeout, d)
	}
	return cmp.Or(d, def)
}

// QueueTimeout checks QueueTimeout: 0 means the invocation timeout with a
// queue; without one it must be 0.
func (ck *Checker) QueueTimeout(queue int, d, invocation time.Duration) time.Duration {
	switch {
	case d < 0 || d > MaxTimeout:
		ck.Bad("QueueTimeout must be in [0, %v], got %v", MaxTimeout, d)
	case queue == 0 && d > 0:
		ck.Bad("QueueTimeout (%v) needs a Queue", d)
	case queue > 0 && d == 0:
		return invocation
	}
	return d
}

// LowWater checks LowWater: 0 means half the queue; below Queue.
func (ck *Checker) LowWater(queue, low int) int {
	switch {
	case low < 0 || low > MaxSize:
		ck.Bad("LowWater must be in [0, %d), got %d", MaxSize, low)
	case queue == 0 && low > 0:
		ck.Bad("LowWater (%d) needs a Queue", low)
	case queue > 0 && low >= queue:
		ck.Bad("LowWater (%d) must be below Queue (%d), or a full queue would count as drained", low, queue)
	case queue > 0 && low == 0:
		return queue / 2
	}
	return low
}

// Probes checks that the half-open probes cannot fill the bulkhead. A probe
// that finds no slot defers the half-open verdict. If the probes alone can
// fill the slots (and queue places), some probe always defers, the breaker
// re-opens, and the successes of the others come too late to count: a
// healthy supplier would stay open for good.
func (ck *Checker) Probes(p, slots, queue int) {
	if p > 0 && slots > 0 && queue >= 0 && int64(p) > int64(slots)+int64(queue) {
		ck.Bad("Breaker.HalfOpenProbes (%d) must not exceed Slots (%d) + Queue (%d): "+
			"a probe that finds no slot re-opens the breaker, so too many probes could never close it",
			p, slots, queue)
	}
}

// ResetTimeout checks the rule that guarantees a half-open probe a slot:
// the open period outlasts every call admitted before the trip.
func (ck *Checker) ResetTimeout(reset, timeout, queueTimeout time.Duration, queue int) {
	limit := timeout + queueTimeout
	switch {
	case reset <= 0 || reset > limit:
		// Fine, or a ResetTimeout the breaker itself refuses.
	case queue > 0:
		ck.Bad("Breaker.ResetTimeout (%v) must exceed InvocationTimeout (%v) + QueueTimeout (%v) = %v: "+
			"a probe admitted when the breaker half-opens could find every slot still held, or queued behind, calls admitted before the trip",
			reset, timeout, queueTimeout, limit)
	default:
		ck.Bad("Breaker.ResetTimeout (%v) must exceed InvocationTimeout (%v): "+
			"a probe admitted when the breaker half-opens could find every slot still held by calls admitted before the trip",
			reset, timeout)
	}
}
