package executor

import (
	"fmt"
	"math"
	"time"
)

// Defaults of StuckConfig's zero values.
const (
	// DefaultStuckMultiple: a call is stuck once it has run 5 × the p99 of
	// the supplier's recent successful calls.
	DefaultStuckMultiple = 5
	// DefaultStuckMinAge: no call younger than 500 ms is stuck.
	DefaultStuckMinAge = 500 * time.Millisecond
)

// StuckConfig decides whether a full bulkhead trips the breaker.
//
// A call that finds every slot taken (and the queue full, if there is one)
// meets one of two bulkheads. A busy one holds young calls: a burst, a
// cold start, a supplier that paused for a moment; they will end soon, and
// only this call is refused (ErrSaturated, counted as RejectedBusy; the
// breaker learns nothing). A stuck one holds a call that has run far longer
// than this supplier's calls normally take: that is evidence against the
// supplier, and the breaker trips in this very call (reason Saturation, or
// QueueFull with a queue), as in the shop outage where it opens one second
// in instead of thirty.
//
// The bulkhead is stuck when its oldest call (running, or waiting in the
// queue) has been there for at least
//
//	clamp(Multiple × p99, MinAge, MaxAge)
//
// where p99 is the 99th percentile of the supplier's recent successful
// calls (Stats.LatencyP99). Without history (fewer than 20 successes so
// far) the threshold is MaxAge, so the first burst of a new supplier is
// never stuck unless its calls are older than half the invocation timeout.
// A call past its deadline whose function has not returned (Stats.Overdue)
// always counts as stuck.
//
// The defaults come from the loadtest scenarios: a supplier answering in
// 100 ms that hangs trips 0.5 s after its calls started to hang (the shop
// outage: at the 11th call, 1 s in); a healthy supplier with lognormal
// latencies (median 32 ms, p99 ≈ 0.5 s) that stalls for 0.7 s now and then,
// and that faces Poisson bursts, never trips in 10 minutes, where the
// literal rule (TripOnAnySaturation) trips on every stall.
type StuckConfig struct {
	// Multiple of the p99 of recent successful calls that a call must have
	// run to be stuck. 0 means 5 (DefaultStuckMultiple); otherwise ≥ 1.
	Multiple float64
	// MinAge is the floor of the threshold: no call younger than this is
	// stuck, however fast the supplier usually answers (a garbage
	// collection or a stall of the machine makes every call look slow for
	// a moment). 0 means 500 ms (DefaultStuckMinAge), or MaxAge if that is
	// less.
	MinAge time.Duration
	// MaxAge is the ceiling of the threshold, and the threshold of a
	// supplier without history: a call that has run this long is stuck,
	// however slow the supplier's history. 0 means half the
	// InvocationTimeout; at most the InvocationTimeout (calls that honour
	// their context never get older than that).
	MaxAge time.Duration
	// TripOnAnySaturation trips the breaker whenever a call finds the
	// bulkhead full, young calls or not: the literal rule, for a supplier
	// whose bulkhead should never fill. The other fields are ignored.
	TripOnAnySaturation bool
}

// stuckPolicy is a StuckConfig with its defaults applied.
type stuckPolicy struct {
	always         bool
	multiple       float64
	minAge, maxAge int64 // ns
}

// resolve applies the defaults of c for an executor whose invocation
// timeout is timeout, reporting each bad field through bad.
func (c StuckConfig) resolve(timeout time.Duration, bad func(format string, args ...any)) stuckPolicy {
	p := stuckPolicy{always: c.TripOnAnySaturation, multiple: c.Multiple}
	switch {
	case math.IsNaN(c.Multiple) || math.IsInf(c.Multiple, 0) || (c.Multiple != 0 && c.Multiple < 1):
		bad("Stuck.Multiple must be ≥ 1, or 0 for the default %d, got %v", DefaultStuckMultiple, c.Multiple)
	case c.Multiple == 0:
		p.multiple = DefaultStuckMultiple
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
		minAge = min(DefaultStuckMinAge, maxAge)
	case c.MinAge > maxAge:
		bad("Stuck.MinAge (%v) must not exceed Stuck.MaxAge (%v)", c.MinAge, maxAge)
	}
	p.minAge, p.maxAge = int64(minAge), int64(maxAge)
	return p
}

// String describes the policy, for error messages and docs.
func (p stuckPolicy) String() string {
	if p.always {
		return "trip on any saturation"
	}
	return fmt.Sprintf("stuck after clamp(%g × p99, %v, %v)", p.multiple, time.Duration(p.minAge), time.Duration(p.maxAge))
}

// stuckAfter returns the age (ns) from which a call makes a full bulkhead
// stuck.
func (ex *Executor) stuckAfter() int64 {
	p := &ex.stuck
	l := ex.latency()
	if l == nil {
		return p.maxAge
	}
	n := l.samples.Load()
	if t := l.threshold.Load(); t != 0 && n-l.thresholdAt.Load() < latRefresh {
		return t
	}
	t := p.maxAge
	if p99 := l.quantile(0.99); p99 > 0 {
		t = int64(min(max(p.multiple*float64(p99), float64(p.minAge)), float64(p.maxAge)))
	}
	l.threshold.Store(t)
	l.thresholdAt.Store(n)
	if rc := ex.rare.Load(); rc != nil {
		rc.busyUntil.Store(0) // computed with the old threshold
	}
	return t
}

// isStuck reports whether a full bulkhead is stuck: some call in it has
// been running (or queued) for at least stuckAfter. Only a call that found
// the bulkhead full asks.
//
// A burst meets the full bulkhead many times in a row; all but the first
// of those refusals cost a clock read and two atomic loads: the first
// remembers when its oldest call will be old enough, and until then no
// call can be (the calls that come later are younger, the oldest only
// leave) unless one goes overdue. A threshold that falls meanwhile (the
// calls that end teach a faster p99) is applied once that time has come.
func (ex *Executor) isStuck() bool {
	if ex.stuck.always {
		return true
	}
	rc := ex.counts()
	if rc.overdue.Load() > 0 {
		return true // past its deadline and still holding its slot
	}
	now := ex.now()
	if now < rc.busyUntil.Load() {
		return false
	}
	after := ex.stuckAfter()
	cutoff := now - after
	oldest, stuck := ex.run.oldestBy(cutoff, int64(ex.timeout)+ex.grace())
	if !stuck && ex.queued != nil {
		// A queued call waits at most queueTO, so its deadline is its
		// enqueueing plus exactly that.
		var q int64
		q, stuck = ex.queued.oldestBy(cutoff, int64(ex.queueTO))
		oldest = min(oldest, q)
	}
	if !stuck && oldest < math.MaxInt64-after { // else no call was listed yet: look again next time
		rc.busyUntil.Store(oldest + after)
	}
	return stuck
}

// aged is a deadline's owner that knows when its call started running.
type aged interface{ startedAt() int64 }

func (c *call[T]) startedAt() int64      { return c.started }
func (g *graceSide[T]) startedAt() int64 { return g.started }

// oldestBy reports whether a deadline on the list belongs to a call that
// started at or before cutoff and, if none does, a time no call on the
// list started before. span is the longest time from a call's start to its
// deadline, so the list (sorted by deadline) can be cut short where even
// the earliest possible start is after cutoff: for an executor's running
// calls that is one or two entries. Entries whose owner does not know its
// start (queued calls) started at deadline − span.
func (l *lazyTimeline) oldestBy(cutoff, span int64) (oldest int64, found bool) {
	oldest = math.MaxInt64
	t := l.p.Load()
	if t == nil || t == closedTimeline {
		return oldest, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.head
	for ; d != nil && d.at-span <= cutoff; d = d.next {
		start := d.at - span
		if a, ok := d.owner.(aged); ok {
			start = a.startedAt()
		}
		if start <= cutoff {
			return start, true
		}
		oldest = min(oldest, start)
	}
	if d != nil {
		oldest = min(oldest, d.at-span) // the rest started after this
	}
	return oldest, false
}

// mergeStuck applies a dependency's non-zero stuck settings over the
// default's (see GroupConfig.Dependencies).
func mergeStuck(def *StuckConfig, o StuckConfig) {
	set(&def.Multiple, o.Multiple)
	set(&def.MinAge, o.MinAge)
	set(&def.MaxAge, o.MaxAge)
	set(&def.TripOnAnySaturation, o.TripOnAnySaturation)
}
