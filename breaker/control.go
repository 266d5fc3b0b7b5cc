package breaker

import (
	"fmt"
	"time"
)

// Trip opens the breaker with reason r (Manual for an operator; the executor
// uses Saturation and QueueFull) and starts a fresh open period. It does
// nothing when the breaker is already Open or ForcedOpen, or Disabled (an
// operator's Disable wins over automatic trips; Reset first). A reason that
// never opens a breaker (the reasons of the closing and half-open
// transitions, or a value that is none of the reasons) is an error, and
// the breaker is left as it was.
func (b *Breaker) Trip(r Reason) error {
	if b.unmade() {
		return errUnmade
	}
	if !r.opens() {
		return fmt.Errorf("breaker: Trip with reason %v, which does not open a breaker (Manual for an operator)", r)
	}
	for {
		cur := b.cur.Load()
		if cur.state != Closed && cur.state != HalfOpen {
			return nil
		}
		if b.open(cur, r, -1, 1, b.now(), nil) {
			return nil
		}
	}
}

// Reset closes the breaker with fresh counters, whatever its state, and ends
// ForcedOpen and Disabled. Resetting a Closed breaker clears its counts
// without an event (no transition happened); calls admitted before a Reset
// count as late. The transition's reason is Manual.
func (b *Breaker) Reset() {
	if b.unmade() {
		return
	}
	for {
		cur := b.cur.Load()
		next := b.closedRecord(&record{reason: Manual, kind: -1})
		if cur.state == Closed {
			// No transition: keep the generation and the history.
			next.gen, next.from, next.reason, next.kind, next.at = cur.gen, cur.from, cur.reason, cur.kind, cur.at
			if b.cur.CompareAndSwap(cur, next) {
				return
			}
			continue
		}
		if b.transition(cur, next, b.now(), nil) {
			return
		}
	}
}

// ForceOpen rejects every call until Reset, with no probes. The
// transition's reason is Manual.
func (b *Breaker) ForceOpen() {
	b.override(ForcedOpen)
}

// Disable admits every call until Reset. Outcomes are still counted in
// Stats, but nothing trips the breaker. The transition's reason is Manual.
func (b *Breaker) Disable() {
	b.override(Disabled)
}

func (b *Breaker) override(s State) {
	if b.unmade() {
		return
	}
	for {
		cur := b.cur.Load()
		if cur.state == s {
			return
		}
		next := &record{state: s, reason: Manual, kind: -1}
		if s == ForcedOpen {
			next.until = never
		}
		if b.transition(cur, next, b.now(), nil) {
			return
		}
	}
}

// Drained reports that the bulkhead's queue has drained to its low-water
// mark: a breaker Open because the queue was full (reason QueueFull)
// closes, with reason QueueDrained and no probe. It reports whether it
// closed the breaker; in any other state it does nothing.
func (b *Breaker) Drained() bool {
	if b.unmade() {
		return false
	}
	for {
		cur := b.cur.Load()
		if cur.state != Open || cur.reason != QueueFull {
			return false
		}
		if b.transition(cur, b.closedRecord(&record{reason: QueueDrained, kind: -1}), b.now(), nil) {
			return true
		}
	}
}

// State returns the current state. Recovery is lazy: an Open breaker whose
// reset timeout has passed still reports Open until the next Allow admits
// the first probe (Stats.OpenUntil says when that may happen). A nil or
// zero Breaker, which admits nothing, reports ForcedOpen.
func (b *Breaker) State() State {
	if b == nil {
		return ForcedOpen
	}
	r := b.cur.Load()
	if r == nil {
		return ForcedOpen
	}
	return r.state
}

// Stats is a snapshot of a breaker. The state fields come from one atomic
// load, so they are consistent with each other; the totals are read just
// after.
type Stats struct {
	Name       string
	State      State
	Reason     Reason    // why the breaker entered State
	Kind       string    // the ErrorKind rule, when Reason is ErrorKind
	Since      time.Time // when it entered State
	OpenUntil  time.Time // Open: when the first probe may start (zero for ForcedOpen)
	Generation uint64    // transitions so far
	// Attempts counts openings in a row without a close (Open, HalfOpen).
	Attempts int

	// Closed only: the counts that the trip rules look at.
	ConsecutiveFailures int // failures in a row that matched no ErrorKind
	WindowCalls         int
	WindowFailures      int
	WindowSlowCalls     int

	// HalfOpen only.
	ProbesAdmitted  int
	ProbesSucceeded int

	// Totals since New. Successes are not counted here: counting the common
	// case would put a contended write on every call; the executor counts
	// them.
	Failures uint64
	Ignored  uint64
	Rejected uint64 // Allow calls refused with ErrOpen
	Late     uint64 // results of permits from an older generation

	// Transitions counts the transitions made so far, indexed by their
	// Reason: Transitions[Saturation] is how often the breaker opened
	// because its bulkhead was full.
	Transitions [numReasons]uint64
}

// Stats returns a snapshot of the breaker. For a nil or zero Breaker it is
// zero but for State, ForcedOpen, as State reports.
func (b *Breaker) Stats() Stats {
	var r *record
	if b != nil {
		r = b.cur.Load()
	}
	if r == nil {
		return Stats{State: ForcedOpen}
	}
	s := Stats{
		Name:       b.rules().name,
		State:      r.state,
		Reason:     r.reason,
		Kind:       b.kindName(r.kind),
		Since:      b.epoch.Add(time.Duration(r.at)),
		Generation: r.gen,
		Attempts:   int(r.attempts),
		Failures:   b.failures.Load(),
		Ignored:    b.ignored.Load(),
		Rejected:   b.rejected.Load(),
		Late:       b.late.Load(),
	}
	if h := b.hist.Load(); h != nil {
		for i := range s.Transitions {
			s.Transitions[i] = h.transitions[i].Load()
		}
	}
	switch r.state {
	case Open:
		s.OpenUntil = b.epoch.Add(time.Duration(r.until))
	case HalfOpen:
		p := r.probes.Load()
		s.ProbesAdmitted, s.ProbesSucceeded = int(p>>32), int(uint32(p))
	case Closed:
		s.ConsecutiveFailures = int(r.consec.Load())
		if r.extra != nil && r.extra.win != nil {
			c, f, sl := r.extra.win.counts(b.now())
			s.WindowCalls, s.WindowFailures, s.WindowSlowCalls = int(c), int(f), int(sl)
		}
	}
	return s
}
