package executor

import (
	"sync"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/internal/adaptive"
	"github.com/fusebox-go/fusebox/internal/stuck"
	"github.com/fusebox-go/fusebox/internal/validate"
)

// AdaptiveConfig lets the bulkhead size itself between Min and Max from the
// calls that end, without a goroutine; it never grows while a slot is
// stuck, so a hang trips the breaker as with a fixed size. The zero value
// is off. It needs an InvocationTimeout of at most an hour
// (docs/adaptive.md).
type AdaptiveConfig struct {
	// Max is the largest limit; 0 turns adaptive sizing off.
	Max int
	// Min is the smallest limit. 0 means 1; at most Max.
	Min int
	// Initial is the limit at New. 0 means Slots, within [Min, Max].
	Initial int
	// OnChange, if set, is told of limit changes, at most once a second, on a
	// call's goroutine, with no lock held. A panic in it is recovered.
	OnChange func(supplier string, from, to int, reason string)
}

// adaptSet is an AdaptiveConfig resolved.
type adaptSet struct {
	adaptive.Bounds
	onChange func(supplier string, from, to int, reason string)
}

func (c AdaptiveConfig) resolve(workers int, ck *validate.Checker) adaptSet {
	return adaptSet{adaptive.Resolve(c.Max, c.Min, c.Initial, workers, validate.MaxSize, ck.Bad), c.OnChange}
}

// adaptState is an executor's adaptive limit: the limiter and its window,
// fed by record where a sampled success ends (observe: one atomic add on
// the executor's adaptAcc and one load); the rest runs once per window,
// under mu.
type adaptState struct {
	// sizeMu orders the resizes of the bulkhead: a window's (resizeToLimit)
	// and Reconfigure's (apply), so that whichever comes last leaves the
	// bulkhead at the limit in force and the configured queue. Taken
	// before mu, never under it.
	sizeMu sync.Mutex

	mu      sync.Mutex
	retired bool // adaptive sizing was turned off: the bulkhead is no longer this limit's
	set     adaptSet
	lim     adaptive.Limiter
	win     adaptive.Window
}

func newAdaptState(ex *Executor, a adaptSet) *adaptState {
	s := &adaptState{set: a, lim: adaptive.New(a.Min, a.Max, a.Initial)}
	s.win.Open(&ex.adaptAcc, ex.now(), ex.br.Stats().Generation, a.Initial)
	return s
}

// observe is a sampled success (one in adaptive.Every of each duration
// bucket) that took d ns (-1 unknown) and ended at now, inTime if it beat
// its deadline. Calls of an older breaker generation never teach the
// limit: a window in which the breaker made a transition is not learned
// from, and every call admitted before a trip has ended before the
// breaker can close again (ResetTimeout > InvocationTimeout).
func (s *adaptState) observe(ex *Executor, d, now int64, inTime bool) {
	if d >= 0 && inTime && s.win.Add(&ex.adaptAcc, d, now) {
		s.closeWindow(ex, now)
	}
}

// closeWindow feeds the window's observations to the limiter and resizes
// the bulkhead if the limit changed. One caller at a time; the others go on.
// OnChange is told after the locks are released: it may read Stats, which
// takes mu, or Reconfigure.
func (s *adaptState) closeWindow(ex *Executor, now int64) {
	if !s.mu.TryLock() {
		return
	}
	changed, t := s.closeLocked(ex, now)
	s.mu.Unlock()
	if !changed {
		return
	}
	if ex.resizeToLimit(s) && t.f != nil {
		tellLimit(t.f, ex.name, t.from, t.to, t.why)
	}
}

// limitTell is a call of OnChange that is due (f nil: none).
type limitTell struct {
	f        func(string, int, int, string)
	from, to int
	why      string
}

// closeLocked is closeWindow's part under mu. It reports whether the limit
// changed, and the OnChange call that is due.
func (s *adaptState) closeLocked(ex *Executor, now int64) (changed bool, t limitTell) {
	if s.retired {
		return false, t
	}
	was := s.lim.Limit()
	busy := ex.counts().rejected[RejectedBusy].Load()
	closed := s.win.Close(&ex.adaptAcc, &s.lim, now, busy, ex.br.Stats().Generation, ex.bh.Stats().InUse,
		func() bool { return ex.anyStuck(now) })
	to := s.lim.Limit()
	if !closed || to == was {
		return false, t
	}
	if s.set.onChange != nil {
		if from, due := s.win.Tell(now, to); due {
			t = limitTell{f: s.set.onChange, from: from, to: to, why: s.lim.Reason()}
		}
	}
	return true, t
}

// tellLimit calls AdaptiveConfig.OnChange; a panic in it is recovered.
func tellLimit(f func(string, int, int, string), name string, from, to int, why string) {
	_, _ = breaker.Guard("AdaptiveConfig.OnChange", func() (struct{}, error) { f(name, from, to, why); return struct{}{}, nil }, nil)
}

// anyStuck reports whether a slot is held by a call older than the stuck
// threshold, or overdue: then the limit must not grow.
func (ex *Executor) anyStuck(now int64) bool {
	rc := ex.counts()
	if rc.overdue.Load() > 0 {
		return true
	}
	old, _ := ex.run.CountOld(now-ex.stuckAfter(), rc.crit.RunSpan.Widen(ex.timeout.Load()+ex.grace(), now), 1)
	return old > 0
}

// resizeToLimit sets the bulkhead's slots to s's limit, keeping its queue,
// unless adaptive sizing has been turned off since, and starts the queued
// calls that the new slots went to (outside the locks: a Runner is user
// code). It reads the limit under sizeMu, so that of two windows that
// closed one after the other the later limit is the one that stays. It
// reports false when adaptive sizing was off.
func (ex *Executor) resizeToLimit(s *adaptState) bool {
	s.sizeMu.Lock()
	s.mu.Lock()
	to, retired := s.lim.Limit(), s.retired
	s.mu.Unlock()
	if retired {
		s.sizeMu.Unlock()
		return false
	}
	bs := ex.bh.Stats()
	handed := ex.resize(to, bs.QueueCap, bs.LowWater)
	// needRunning follows the limit: a "not stuck before" computed for the
	// old one would refuse a bulkhead stuck under a cut limit as busy
	// (isStuck looks at the size again after it stores one).
	if rc := ex.rare.Load(); rc != nil {
		rc.crit.BusyUntil.Store(0)
	}
	s.sizeMu.Unlock()
	for _, w := range handed {
		w.Value.(promoter).promote()
	}
	return true
}

// needRunning is the number of old calls that make a full bulkhead stuck:
// half of its slots, rounded up, of the limit now in force.
func (ex *Executor) needRunning(p *stuck.Policy) int {
	if ex.adapt.Load() == nil {
		return int(p.NeedRunning)
	}
	return (ex.bh.Stats().Slots + 1) / 2
}

// applyAdaptive puts the adaptive settings of r in force (New and
// Reconfigure) and returns the bulkhead's size: the limit, kept within the
// new bounds when adaptive sizing stays on, Initial when it turns on,
// Slots when it is off.
//
// Reconfigure calls it, and resizes the bulkhead to what it returns, under
// the sizeMu of the state in force before (see sizeMu); a state turned off
// is retired under its mu, so that a window closing across the
// Reconfigure does not resize the bulkhead after it. A state turned on is
// returned as fresh, with its sizeMu held: its windows may close as soon
// as it is published, and their resizes must come after the caller's.
// The caller unlocks it once the bulkhead has the size.
func (ex *Executor) applyAdaptive(r resolved) (size int, fresh *adaptState) {
	if !r.adapt.On {
		if s := ex.adapt.Swap(nil); s != nil {
			s.mu.Lock()
			s.retired = true
			s.mu.Unlock()
		}
		return r.slots, nil
	}
	s := ex.adapt.Load()
	if s == nil {
		s = newAdaptState(ex, r.adapt)
		s.sizeMu.Lock()
		ex.adapt.Store(s)
		return r.adapt.Initial, s
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.set = r.adapt
	s.lim.SetBounds(r.adapt.Min, r.adapt.Max)
	return s.lim.Limit(), nil
}

// adaptStats fills the limit's fields of Stats.
func (ex *Executor) adaptStats(st *Stats) {
	s := ex.adapt.Load()
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st.Adaptive = true
	st.LimitReason = s.lim.Reason()
	st.LimitBaseline = s.lim.Baseline()
	st.LimitGradient = s.lim.Gradient()
	st.LimitMin, st.LimitMax = s.lim.Bounds()
}
