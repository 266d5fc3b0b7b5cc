package executor

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/internal/latency"
	"github.com/fusebox-go/fusebox/internal/timeline"
)

// Defaults of StuckConfig's zero values.
const (
	// defaultStuckMultiple: a call is stuck once it has run 8 × the p99 of
	// the supplier's recent successful calls.
	defaultStuckMultiple = 8
	// defaultStuckMinAge: no call younger than 500 ms is stuck.
	defaultStuckMinAge = 500 * time.Millisecond
)

// StuckConfig decides whether a full bulkhead trips the breaker: it does
// (ErrSaturated) when half of the slots are held by calls older than
// clamp(Multiple × p99, MinAge, MaxAge), p99 being Stats.LatencyP99;
// otherwise only the call that found it full is refused (ErrBusy). The
// zero value is the default rule (docs/design.md, "The stuck criterion").
type StuckConfig struct {
	// Multiple of the p99 that makes a call old. 0 means 8; otherwise ≥ 1.
	Multiple float64
	// MinAge is the threshold's floor. 0 means 500 ms (at most MaxAge).
	MinAge time.Duration
	// MaxAge is the threshold's ceiling. 0 means InvocationTimeout/2.
	MaxAge time.Duration
	// TripOnAnySaturation trips on any full bulkhead; the others are ignored.
	TripOnAnySaturation bool
}

// stuckPolicy is a StuckConfig with its defaults applied.
// It is part of every executor, idle ones too: kept to 32 bytes.
type stuckPolicy struct {
	minAge, maxAge int64 // ns
	multiple       float32
	// Old calls that make the bulkhead stuck: half of the slots (rounded
	// up), or the oldest queued call.
	needRunning, needQueued int32
	always                  bool
}

// resolve applies the defaults of c for an executor with this invocation
// timeout, slots and queue places, reporting each bad field through bad.
func (c StuckConfig) resolve(timeout time.Duration, slots, queue int, bad func(format string, args ...any)) stuckPolicy {
	p := stuckPolicy{always: c.TripOnAnySaturation, multiple: float32(c.Multiple),
		needRunning: int32((slots + 1) / 2), needQueued: 1}
	switch {
	case math.IsNaN(c.Multiple) || math.IsInf(c.Multiple, 0) || (c.Multiple != 0 && c.Multiple < 1):
		bad("Stuck.Multiple must be ≥ 1, or 0 for the default %d, got %v", defaultStuckMultiple, c.Multiple)
	case c.Multiple == 0:
		p.multiple = defaultStuckMultiple
	}
	maxAge := c.MaxAge
	switch {
	case c.MaxAge < 0 || c.MaxAge > timeout:
		bad("Stuck.MaxAge must be in [0, InvocationTimeout (%v)], got %v", timeout, c.MaxAge)
	case c.MaxAge == 0:
		maxAge = timeout / 2
	}
	minAge := c.MinAge
	switch {
	case c.MinAge < 0:
		bad("Stuck.MinAge must be ≥ 0, got %v", c.MinAge)
	case c.MinAge == 0:
		minAge = min(defaultStuckMinAge, maxAge)
	case c.MinAge > maxAge:
		bad("Stuck.MinAge (%v) must not exceed Stuck.MaxAge (%v)", c.MinAge, maxAge)
	}
	p.minAge, p.maxAge = int64(minAge), int64(maxAge)
	return p
}

// stuckState is the executor's part of the criterion. It lives in the
// executor's rareCounts: an idle executor with the default criterion (the
// 10,000 of a large Group) pays nothing for it; a non-default criterion,
// or an OnBusy listener, makes it at New.
type stuckState struct {
	// set holds the criterion and the OnBusy listener in force, replaced
	// whole by Reconfigure.
	set atomic.Pointer[stuckSet]
	lat atomic.Pointer[latency.Histogram] // made at the first success
	// warm is set once the history holds latency.Warm samples: from then on
	// one success in latency.Every is sampled. A flag of its own, written once,
	// rather than the history's sample count, which every sample writes.
	warm atomic.Bool
	// busyUntil: no call in the bulkhead can be stuck before this time
	// (executor clock), as found by the last busy refusal (see isStuck).
	busyUntil atomic.Int64
	// The longest spans of the calls still listed from before a
	// Reconfigure that shortened a timeout (see spanBound).
	runSpan, queueSpan spanBound
}

// spanBound is the longest span (from a call's start, or its queueing, to
// its deadline) of the calls listed under timeouts since replaced, and
// the time by which the last of them has left its list. countOld walks
// the list, sorted by deadline, as far as the longest span of any listed
// call requires: after a Reconfigure that shortened a timeout, the calls
// admitted before it reach further than the new timeout says.
type spanBound struct{ span, until atomic.Int64 }

// replaced records that calls listed until now had spans up to old.
// Called by Reconfigure (concurrent Reconfigures of one executor are
// documented as best avoided: two may each keep only their own bound).
func (b *spanBound) replaced(old, now int64) {
	b.span.Store(b.widen(old, now))
	b.until.Store(max(b.until.Load(), addSat(now, time.Duration(old))))
}

// widen returns span, or the longer span of calls listed before a
// Reconfigure while any of them may still be listed.
func (b *spanBound) widen(span, now int64) int64 {
	if now < b.until.Load() {
		return max(span, b.span.Load())
	}
	return span
}

// stuckSet is what Config sets for the stuck criterion.
type stuckSet struct {
	stuck  stuckPolicy
	onBusy func(Busy)
}

// stuckNow returns the criterion and the OnBusy listener in force.
func (s *stuckState) stuckNow() *stuckSet { return s.set.Load() }

// setStuck puts a criterion in force. The cached threshold and the time
// before which no call can be stuck were computed with the old one.
func (s *stuckState) setStuck(p stuckPolicy, onBusy func(Busy)) {
	s.set.Store(&stuckSet{stuck: p, onBusy: onBusy})
	if l := s.lat.Load(); l != nil {
		l.SetThreshold(0, 0)
	}
	s.busyUntil.Store(0)
}

// defaultStuck is the policy of StuckConfig's zero value for ex.
func (ex *Executor) defaultStuck() stuckPolicy {
	bs := ex.bh.Stats()
	return StuckConfig{}.resolve(time.Duration(ex.timeout.Load()), bs.Slots, bs.QueueCap, func(string, ...any) {})
}

// stuckAfter returns the age (ns) from which a call makes a full bulkhead
// stuck.
func (ex *Executor) stuckAfter() int64 {
	rc := ex.counts()
	p := &rc.stuckNow().stuck
	l := rc.lat.Load()
	if l == nil {
		return p.maxAge
	}
	n := l.Samples()
	if t := l.Threshold(); t != 0 {
		return t
	}
	t := p.maxAge
	if p99 := l.Quantile(0.99); p99 > 0 {
		t = int64(min(max(float64(p.multiple)*float64(p99), float64(p.minAge)), float64(p.maxAge)))
	}
	l.SetThreshold(t, n)
	rc.busyUntil.Store(0) // computed with the old threshold
	return t
}

// isStuck reports whether a full bulkhead is stuck: at least half of its
// slots (rounded up) are held by calls that have run for stuckAfter or
// longer, or are overdue; or, with a queue, its oldest call has waited
// that long (the queue is first in, first out: its oldest call is no
// outlier, it says how long the queue takes to move). Only a call that
// found the bulkhead full asks.
//
// Half, not one: a single call from the far tail of a healthy supplier's
// latency (a 3 s answer from a supplier whose p99 is 0.5 s) must not make
// a burst that fills the other slots look like a hang. A hang holds every
// call it gets, so half of the slots are old soon after the first one is.
//
// A burst meets the full bulkhead many times in a row; all but the first
// of those refusals cost a clock read and a few atomic loads: the first
// remembers when the next of its calls can become old enough, and until
// then the count of old calls cannot grow (the calls that come later are
// younger, and calls only leave) unless one goes overdue, which is counted
// on its own. A threshold that falls meanwhile (the calls that end teach a
// faster p99) is applied once that time has come.
func (ex *Executor) isStuck() bool {
	rc := ex.counts()
	p := &rc.stuckNow().stuck
	if p.always {
		return true
	}
	overdue := int(rc.overdue.Load())
	needRunning, needQueued := ex.needRunning(p), int(p.needQueued)
	if overdue >= needRunning {
		return true
	}
	now := ex.now()
	if now < rc.busyUntil.Load() {
		return false
	}
	after := ex.stuckAfter()
	cutoff := now - after
	old, next := ex.run.CountOld(cutoff, rc.runSpan.widen(ex.timeout.Load()+ex.grace(), now), needRunning-overdue)
	stuck := overdue+old >= needRunning
	if qt := ex.queued.Load(); !stuck && qt != nil {
		var qnext int64
		old, qnext = qt.CountOld(cutoff, rc.queueSpan.widen(ex.queueTO.Load(), now), needQueued)
		stuck = old >= needQueued
		next = min(next, qnext)
	}
	if !stuck && next < math.MaxInt64-after { // else no call was listed yet: look again next time
		rc.busyUntil.Store(next + after)
		if ex.needRunning(p) != needRunning {
			// The adaptive limit changed meanwhile, and its reset of the
			// cache may have come before this store: it holds for the
			// old limit only.
			rc.busyUntil.Store(0)
		}
	}
	return stuck
}

// queuedAt is when the call was queued, on the executor's clock. Only for
// a call listed in the queue (c.q is set before it is listed, and never
// changes once it is).
func (c *call[T]) queuedAt() int64 { return c.q.since }

// startedAt is when the call got its slot, on the executor's clock, to
// the microsecond (the millisecond for a span of over half an hour);
// math.MaxInt64 (never old) for a span of over 24 days. It is derived from
// the call's deadline and its span rather than kept: the call record must
// stay in its 192-byte size class. The span is the call's own, not the
// executor's timeout, which a Reconfigure may change while it runs.
func (c *call[T]) startedAt() int64 {
	if c.span == math.MaxUint32 {
		return math.MaxInt64
	}
	return c.ctx.Node.At - spanNs(c.span)
}

// spanOf encodes d ≥ 0 ns, the time from a call's start to its deadline, in
// 32 bits: µs, rounded down, below 2³¹ µs (about 36 minutes); above, ms
// with the top bit set, up to about 24 days; beyond, math.MaxUint32.
func spanOf(d int64) uint32 {
	if us := d / int64(time.Microsecond); us < 1<<31 {
		return uint32(us)
	}
	if ms := d / int64(time.Millisecond); ms < 1<<31-1 {
		return 1<<31 | uint32(ms)
	}
	return math.MaxUint32
}

// spanNs decodes a span of spanOf (not math.MaxUint32) into ns.
func spanNs(s uint32) int64 {
	if s&(1<<31) == 0 {
		return int64(s) * int64(time.Microsecond)
	}
	return int64(s&^(1<<31)) * int64(time.Millisecond)
}

// Since is when what deadline k times began, for the stuck criterion
// (timeline.CountOld): a queued call's queueing, a running call's start.
// A timed-out call in its grace period is counted as overdue, never twice,
// and a call run outside the bulkhead holds no slot: neither is ever old.
func (c *call[T]) Since(k timeline.Kind) int64 {
	switch k {
	case queueDeadline:
		return c.queuedAt() // its span is not written yet: a promotion may be writing it
	case invocationDeadline:
		return c.startedAt()
	}
	return math.MaxInt64
}
