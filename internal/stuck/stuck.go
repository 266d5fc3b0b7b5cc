// Package stuck holds the executor's stuck criterion: the rule, resolved
// from StuckConfig, that tells a full bulkhead held by old calls (a hang:
// trip the breaker) from one held by young calls (busy: refuse one call),
// and the state it learns from, the latency history of recent successes.
// The executor counts the old calls in its timelines; docs/design.md, "The
// stuck criterion", has the rule and "What the latency history learns
// from" its sampling.
package stuck

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/internal/latency"
)

// Defaults of StuckConfig's zero values.
const (
	// DefaultMultiple: a call is stuck once it has run 8 × the p99 of the
	// supplier's recent successful calls.
	DefaultMultiple = 8
	// DefaultMinAge: no call younger than 500 ms is stuck.
	DefaultMinAge = 500 * time.Millisecond
)

// Policy is a StuckConfig with its defaults applied. It is part of every
// executor, idle ones too: kept to 32 bytes.
type Policy struct {
	MinAge, MaxAge int64 // ns
	Multiple       float32
	// Old calls that make the bulkhead stuck: half of the slots (rounded
	// up), or the oldest queued call.
	NeedRunning, NeedQueued int32
	Always                  bool // trip on any saturation
}

// Config is the executor's StuckConfig, field for field.
type Config struct {
	Multiple            float64
	MinAge, MaxAge      time.Duration
	TripOnAnySaturation bool
}

// Resolve applies the defaults of c for an executor with this invocation
// timeout and slots, reporting each bad field, by its name in the
// executor's Config, through bad.
func Resolve(c Config, timeout time.Duration, slots int, bad func(format string, args ...any)) Policy {
	p := Policy{Always: c.TripOnAnySaturation, Multiple: float32(c.Multiple),
		NeedRunning: int32((slots + 1) / 2), NeedQueued: 1}
	switch {
	case math.IsNaN(c.Multiple) || math.IsInf(c.Multiple, 0) || (c.Multiple != 0 && c.Multiple < 1):
		bad("Stuck.Multiple must be ≥ 1, or 0 for the default %d, got %v", DefaultMultiple, c.Multiple)
	case c.Multiple == 0:
		p.Multiple = DefaultMultiple
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
		minAge = min(DefaultMinAge, maxAge)
	case c.MinAge > maxAge:
		bad("Stuck.MinAge (%v) must not exceed Stuck.MaxAge (%v)", c.MinAge, maxAge)
	}
	p.MinAge, p.MaxAge = int64(minAge), int64(maxAge)
	return p
}

// Set is what the executor's Config sets for the criterion: the policy
// and the listener of busy refusals (L), replaced together.
type Set[L any] struct {
	Policy Policy
	OnBusy L
}

// State is an executor's part of the criterion. It lives with the
// executor's rare counters, so an idle executor with the default
// criterion pays nothing for it. Safe for concurrent use.
type State[L any] struct {
	set atomic.Pointer[Set[L]]
	lat atomic.Pointer[latency.Histogram] // made at the first sampled success
	// warm is set once the history holds latency.Warm samples: from then on
	// one success in latency.Every is sampled. A flag of its own, written
	// once, rather than the history's sample count, which every sample
	// writes.
	warm atomic.Bool
	// BusyUntil: no call in the bulkhead can be stuck before this time
	// (executor clock), as found by the last busy refusal. A burst meets
	// the full bulkhead many times in a row; all but the first of those
	// refusals cost a clock read and a few loads: until then the count of
	// old calls cannot grow (later calls are younger, and calls only
	// leave) unless one goes overdue, which is counted on its own. A
	// threshold that falls meanwhile is applied once that time has come.
	BusyUntil atomic.Int64
	// The longest spans of the calls still listed from before a
	// Reconfigure that shortened a timeout.
	RunSpan, QueueSpan SpanBound
}

// Now returns the criterion and the listener in force (nil before Put).
func (s *State[L]) Now() *Set[L] { return s.set.Load() }

// Put puts a criterion in force. The cached threshold and the time before
// which no call can be stuck were computed with the old one: both go.
func (s *State[L]) Put(p Policy, onBusy L) {
	s.set.Store(&Set[L]{Policy: p, OnBusy: onBusy})
	if l := s.lat.Load(); l != nil {
		l.SetThreshold(0, 0)
	}
	s.BusyUntil.Store(0)
}

// After returns the age (ns) from which a call makes a full bulkhead
// stuck: clamp(Multiple × p99, MinAge, MaxAge), or MaxAge without a
// history. It is cached for latency.Refresh samples.
func (s *State[L]) After() int64 {
	p := &s.set.Load().Policy
	l := s.lat.Load()
	if l == nil {
		return p.MaxAge
	}
	n := l.Samples()
	if t := l.Threshold(); t != 0 {
		return t
	}
	t := p.MaxAge
	if p99 := l.Quantile(0.99); p99 > 0 {
		t = int64(min(max(float64(p.Multiple)*float64(p99), float64(p.MinAge)), float64(p.MaxAge)))
	}
	l.SetThreshold(t, n)
	s.BusyUntil.Store(0) // computed with the old threshold
	return t
}

// Observe is a successful call that took d ns (-1: not known), the n-th
// of its duration bucket: sample it if its turn has come. The warm-up
// samples every call; after it, every latency.Every-th call of each bucket,
// which thins every duration alike. Only the present teaches: a call that
// returned after its deadline (!inTime), ran as long as the invocation
// timeout now in force, or was admitted under an older breaker generation
// (!current) is not sampled.
func (s *State[L]) Observe(d int64, n uint64, inTime bool, timeout int64, current bool) {
	if d < 0 {
		return
	}
	if n%latency.Every != 0 && s.warm.Load() {
		return
	}
	if !inTime || d >= timeout || !current {
		return
	}
	l := s.lat.Load()
	if l == nil {
		// Made at the first success: an executor that never had one (an
		// idle supplier of a large Group) does not pay for it.
		s.lat.CompareAndSwap(nil, &latency.Histogram{})
		l = s.lat.Load()
	}
	if l.Record(d) >= latency.Warm && !s.warm.Load() {
		s.warm.Store(true)
	}
}

// Quantile returns the q-quantile of the history, 0 without one.
func (s *State[L]) Quantile(q float64) time.Duration {
	l := s.lat.Load()
	if l == nil {
		return 0
	}
	return l.Quantile(q)
}

// SpanBound is the longest span (from a call's start, or its queueing, to
// its deadline) of the calls listed under timeouts since replaced, and the
// time by which the last of them has left its list. The old calls are
// counted down a list sorted by deadline as far as the longest span of any
// listed call requires: after a Reconfigure that shortened a timeout, the
// calls admitted before it reach further than the new timeout says.
type SpanBound struct{ span, until atomic.Int64 }

// Replaced records that calls listed until now had spans up to old.
// Concurrent Replaced calls may each keep only their own bound.
func (b *SpanBound) Replaced(old, now int64) {
	b.span.Store(b.Widen(old, now))
	b.until.Store(max(b.until.Load(), AddSat(now, time.Duration(old))))
}

// Widen returns span, or the longer span of calls listed before a
// Replaced while any of them may still be listed.
func (b *SpanBound) Widen(span, now int64) int64 {
	if now < b.until.Load() {
		return max(span, b.span.Load())
	}
	return span
}

// AddSat returns now + d, saturating instead of overflowing.
func AddSat(now int64, d time.Duration) int64 {
	if int64(d) > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + int64(d)
}

// SpanOf encodes d ≥ 0 ns, the time from a call's start to its deadline,
// in 32 bits, so that the call record need not keep its start: µs, rounded
// down, below 2³¹ µs (about 36 minutes); above, ms with the top bit set,
// up to about 24 days; beyond, math.MaxUint32 (never old).
func SpanOf(d int64) uint32 {
	if us := d / int64(time.Microsecond); us < 1<<31 {
		return uint32(us)
	}
	if ms := d / int64(time.Millisecond); ms < 1<<31-1 {
		return 1<<31 | uint32(ms)
	}
	return math.MaxUint32
}

// SpanNs decodes a span of SpanOf (not math.MaxUint32) into ns.
func SpanNs(s uint32) int64 {
	if s&(1<<31) == 0 {
		return int64(s) * int64(time.Microsecond)
	}
	return int64(s&^(1<<31)) * int64(time.Millisecond)
}
