package executor

import (
	"math"
	"time"

	"github.com/fusebox-go/fusebox/internal/stuck"
	"github.com/fusebox-go/fusebox/internal/timeline"
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

// defaultStuck is the policy of StuckConfig's zero value for ex.
func (ex *Executor) defaultStuck() stuck.Policy {
	return StuckConfig{}.resolve(time.Duration(ex.timeout.Load()), ex.bh.Stats().Slots, func(string, ...any) {})
}

// resolve applies the defaults of c (see stuck.Resolve).
func (c StuckConfig) resolve(timeout time.Duration, slots int, bad func(format string, args ...any)) stuck.Policy {
	return stuck.Resolve(stuck.Config(c), timeout, slots, bad)
}

// stuckAfter returns the age (ns) from which a call makes a full bulkhead
// stuck.
func (ex *Executor) stuckAfter() int64 { return ex.counts().crit.After() }

// isStuck reports whether a full bulkhead is stuck (docs/design.md, "The
// stuck criterion"): half of its slots held by calls older than
// stuckAfter or overdue, or a queue whose oldest call waited that long.
// A busy answer is cached until a call can next become old (BusyUntil).
func (ex *Executor) isStuck() bool {
	rc := ex.counts()
	p := &rc.crit.Now().Policy
	if p.Always {
		return true
	}
	overdue := int(rc.overdue.Load())
	needRunning, needQueued := ex.needRunning(p), int(p.NeedQueued)
	if overdue >= needRunning {
		return true
	}
	now := ex.now()
	if now < rc.crit.BusyUntil.Load() {
		return false
	}
	after := ex.stuckAfter()
	cutoff := now - after
	old, next := ex.run.CountOld(cutoff, rc.crit.RunSpan.Widen(ex.timeout.Load()+ex.grace(), now), needRunning-overdue)
	is := overdue+old >= needRunning
	if qt := ex.queued.Load(); !is && qt != nil {
		var qnext int64
		old, qnext = qt.CountOld(cutoff, rc.crit.QueueSpan.Widen(ex.queueTO.Load(), now), needQueued)
		is = old >= needQueued
		next = min(next, qnext)
	}
	if !is && next < math.MaxInt64-after { // else no call was listed yet: look again next time
		rc.crit.BusyUntil.Store(next + after)
		if ex.needRunning(p) != needRunning {
			// The adaptive limit changed meanwhile, and its reset of the
			// cache may have come before this store: it holds for the
			// old limit only.
			rc.crit.BusyUntil.Store(0)
		}
	}
	return is
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
	return c.ctx.Node.At - stuck.SpanNs(c.span)
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
