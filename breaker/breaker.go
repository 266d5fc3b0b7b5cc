package breaker

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// ErrOpen is returned by Allow while the breaker rejects calls: Open,
// ForcedOpen, or HalfOpen with every probe place taken.
var ErrOpen = errors.New("breaker: open")

// errUnmade is the error of a call on a nil or zero Breaker, which New did
// not make: it has no state, rules or clock. Allow refuses with it, so a
// call is never made unprotected by mistake.
var errUnmade = errors.New("breaker: a nil or zero *Breaker (make one with breaker.New)")

// unmade reports whether b is nil or a zero Breaker (see errUnmade).
func (b *Breaker) unmade() bool { return b == nil || b.cur.Load() == nil }

// never is the end of an open period that has none (ForcedOpen).
const never = math.MaxInt64

// Breaker is a circuit breaker. It owns no goroutine and no timer: Open →
// HalfOpen is decided on the request path by comparing the clock with the end
// of the open period, so an idle breaker costs a few words of memory and
// nothing has to be stopped. It is safe for concurrent use.
//
// Make one with New. A nil or zero Breaker is not one: on it Allow, Trip
// and Reconfigure return an error, State reports ForcedOpen (it admits
// nothing), and so does Stats, zero otherwise; the other methods do
// nothing.
type Breaker struct {
	// The whole state is one immutable *record, swapped by compare-and-swap
	// on every transition. A record is a generation: permits remember the
	// record they were admitted under, counters that belong to a state
	// (consecutive failures, the sliding window, half-open probe places)
	// live in its record, so a new state starts with fresh counters without
	// anything being cleared, and a result from an older generation is
	// recognised by pointer comparison.
	cur   atomic.Pointer[record]
	epoch time.Time               // the breaker's clock is nanoseconds since epoch (monotonic)
	hist  atomic.Pointer[history] // made at the first transition
	// rs is the compiled Config. Reconfigure swaps it; every method loads
	// it once and uses that one copy throughout.
	rs atomic.Pointer[rules]

	failures, ignored, rejected, late atomic.Uint64

	// first is the initial Closed record and r0 the initial rules, kept
	// inline so that an idle breaker is a single allocation (see
	// TestIdleFootprint).
	first record
	r0    rules
}

// record is one generation of a breaker's state. Its plain fields never
// change after it is published; the atomic ones count within the state.
type record struct {
	gen    uint64
	state  State
	from   State
	reason Reason
	kind   int16 // index into rules.kinds when reason is ErrorKind, else -1
	// timed: a Closed record under a slow-call rule, whose permits need a
	// start time. Here rather than in the rules, so that Allow reads
	// nothing but the record (a Reconfigure that changes it replaces the
	// record).
	timed    bool
	attempts uint32 // Open/HalfOpen: openings in a row without a close (≥ 1)
	at       int64  // when the state began (ns since epoch)
	until    int64  // Open: when the first probe may start

	consec atomic.Int64   // Closed: failures in a row matching no ErrorKind
	probes atomic.Uint64  // HalfOpen: admitted<<32 | succeeded
	extra  *closedCounter // Closed with ErrorKinds or a rate rule, else nil
}

// closedCounter holds the optional counters of a closed period.
type closedCounter struct {
	kinds []atomic.Int64 // consecutive failures per ErrorKind
	win   window
}

const probeAdmit = 1 << 32

// New returns a closed breaker, or an error naming every invalid field.
func New(cfg Config) (*Breaker, error) {
	r, err := compile(cfg)
	if err != nil {
		return nil, err
	}
	b := &Breaker{r0: r, epoch: time.Now()}
	b.rs.Store(&b.r0)
	b.first.kind = -1
	b.cur.Store(b.closedRecord(&b.first))
	return b, nil
}

// rules returns the rules in force.
func (b *Breaker) rules() *rules { return b.rs.Load() }

// now reads the breaker's monotonic clock.
func (b *Breaker) now() int64 { return int64(time.Since(b.epoch)) }

// Permit is the right to make one call. Report its end with exactly one of
// Done, Record, Ignore or Reject. The zero Permit (returned with an error)
// ignores all of them. A Permit is a small value; copy it freely.
type Permit struct {
	b     *Breaker
	r     *record
	start int64
}

// Allow asks to make a call. It returns ErrOpen, allocating nothing, while
// the breaker rejects. In Closed it is one atomic load and reads no clock
// (unless the slow-call rule needs the start time). On a nil or zero
// Breaker it returns an error and the zero Permit.
func (b *Breaker) Allow() (Permit, error) {
	if b == nil {
		return Permit{}, errUnmade
	}
	r := b.cur.Load()
	if r == nil {
		return Permit{}, errUnmade
	}
	if r.state == Closed {
		return b.permit(r), nil
	}
	// The other hot path: open, and not yet time for a probe. One clock
	// read (the only way to know when the reset timeout has passed without
	// a timer) and one counter.
	if r.state == Open && b.now() < r.until {
		b.rejected.Add(1)
		return Permit{}, ErrOpen
	}
	return b.allowSlow(r)
}

func (b *Breaker) permit(r *record) Permit {
	p := Permit{b: b, r: r}
	if r.timed {
		p.start = b.now()
	}
	return p
}

func (b *Breaker) allowSlow(r *record) (Permit, error) {
	for ; ; r = b.cur.Load() {
		switch r.state {
		case Closed, Disabled:
			return b.permit(r), nil
		case Open:
			if r.until == never {
				return b.reject()
			}
			now := b.now()
			if now < r.until {
				return b.reject()
			}
			// The open period is over: whoever swaps in the half-open
			// record is its first probe.
			next := &record{state: HalfOpen, reason: ResetTimeout, kind: -1, attempts: r.attempts}
			next.probes.Store(probeAdmit)
			if b.transition(r, next, now, nil) {
				return b.permit(next), nil
			}
		case HalfOpen:
			p := r.probes.Load()
			if p>>32 >= uint64(b.rules().probes) {
				return b.reject()
			}
			// Take a probe place, then make sure the record is still the
			// current one: a place in a record already replaced would
			// admit a call the breaker no longer agrees to.
			if r.probes.CompareAndSwap(p, p+probeAdmit) && b.cur.Load() == r {
				return b.permit(r), nil
			}
		default: // ForcedOpen
			return b.reject()
		}
	}
}

func (b *Breaker) reject() (Permit, error) {
	b.rejected.Add(1)
	return Permit{}, ErrOpen
}

// Current reports whether no transition has happened since the permit was
// issued (a Reconfigure is none). Statistics that decide, such as a stuck
// criterion's latency history, should learn only from such calls; the
// results of calls admitted before a trip describe the incident.
func (p Permit) Current() bool { return p.b != nil && p.b.cur.Load().gen == p.r.gen }

// Probe reports whether the permit is a half-open probe: one of the few
// calls whose outcome decides whether the breaker closes.
func (p Permit) Probe() bool { return p.r != nil && p.r.state == HalfOpen }

// Done records the end of the call: err nil is a Success, anything else is
// classified by Config.Classify. A permit from an older generation (admitted
// before a transition) changes no state; it is counted in Stats.Late.
//
// Done runs Config.Classify, the ErrorKinds' Match functions and
// Config.ReadyToTrip on the caller's goroutine. If one of them panics, the
// outcome is recorded first (as a failure, if Classify or a Match
// panicked), so the breaker stays consistent (a half-open probe place is
// never lost), and then Done panics with a *PanicError: the bug surfaces on
// the caller's own goroutine, where the caller can recover it.
func (p Permit) Done(err error) {
	if p.b == nil {
		return
	}
	o, cerr := p.b.Classify(err)
	if merr := p.b.record(p, o, err); cerr == nil {
		cerr = merr
	}
	if cerr != nil {
		panic(cerr)
	}
}

// Record is Done with the outcome already decided (by Classify), for a
// caller that counts calls by outcome itself. err is still needed to match
// Config.ErrorKinds; a nil err matches none. A Match function that panics
// is recovered: the failure matches no kind and Record returns a
// *PanicError.
func (p Permit) Record(o Outcome, err error) error {
	if p.b == nil {
		return nil
	}
	return p.b.record(p, o, err)
}

// Classify returns the outcome Done would record for err: Success for nil,
// else Config.Classify(err). A classifier that panics (or an Unwrap or Is
// method of err, on DefaultClassify's errors.Is walk) is recovered:
// Classify returns Failure and a *PanicError.
func (b *Breaker) Classify(err error) (Outcome, error) {
	if err == nil {
		return Success, nil
	}
	return b.classifyErr(err)
}

// classifyErr is Classify's outlined half, so that Classify(nil), on every
// successful call, stays inlined. A nil or zero Breaker has no rules: it
// classifies as DefaultClassify does.
func (b *Breaker) classifyErr(err error) (Outcome, error) {
	var rs *rules
	if b != nil {
		rs = b.rules()
	}
	return rs.classify(err)
}

// Ignore records the call as Ignored: it decides nothing, and a half-open
// probe gives its place to the next caller. Use it for calls that never ran
// or that the caller itself cancelled.
func (p Permit) Ignore() {
	if p.b != nil {
		_ = p.b.record(p, Ignored, nil) // an ignored outcome calls no user code
	}
}

// Reject reports that the call could not run because the bulkhead behind
// the breaker was full (reason Saturation or QueueFull): a closed breaker
// trips with that reason in this call; a half-open probe re-opens it with
// reason ProbeDeferred and a fresh open period, counting no failed
// attempt. A stale permit changes nothing. A busy refusal that must not
// trip is reported with Ignore instead, and so is a reason that opens no
// breaker (as for Trip): the permit is ignored and nothing trips.
func (p Permit) Reject(reason Reason) {
	b := p.b
	if b == nil || b.cur.Load() != p.r {
		return
	}
	if !reason.opens() {
		p.Ignore() // a probe gives its place back; no half-made transition
		return
	}
	switch p.r.state {
	case Closed:
		b.open(p.r, reason, -1, 1, b.now(), nil)
	case HalfOpen:
		b.open(p.r, ProbeDeferred, -1, p.r.attempts, b.now(), nil)
	}
}

// record records o; the error is a *PanicError from a Match function.
func (b *Breaker) record(p Permit, o Outcome, err error) error {
	switch o {
	case Failure:
		b.failures.Add(1)
	case Ignored:
		b.ignored.Add(1)
	}
	if b.cur.Load() != p.r {
		b.late.Add(1)
		return nil
	}
	switch p.r.state {
	case Closed:
		return b.recordClosed(p, o, err)
	case HalfOpen:
		b.recordProbe(p.r, o, err)
	}
	return nil
}

// recordClosed records o in a closed period. A success and a failure
// touch different counters, so each has its half.
func (b *Breaker) recordClosed(p Permit, o Outcome, err error) error {
	r := p.r
	switch {
	case o == Ignored:
		return nil
	case o == Success && r.extra == nil:
		// The hot path: a success with the consecutive rule alone.
		clearCount(&r.consec)
		return nil
	}
	var now int64
	slow := false
	if r.extra != nil && r.extra.win != nil {
		now = b.now()
		if opt := b.rules().opt; r.timed && opt != nil {
			slow = now-p.start >= opt.slowDuration
		}
	}
	if o == Success {
		return b.closedSuccess(r, now, slow)
	}
	return b.closedFailure(r, now, slow, err)
}

// clearCount zeroes a consecutive-failure count. It loads first: the common
// case (no failures counted) writes nothing, so concurrent successes share
// the cache line instead of fighting over it. CAS, not Store, so that a
// failure counted in between survives.
func clearCount(c *atomic.Int64) {
	if v := c.Load(); v != 0 {
		c.CompareAndSwap(v, 0)
	}
}

// closedSuccess clears the consecutive counts of a closed period with
// optional rules and, with a window, adds the call to it. The error is a
// *PanicError from ReadyToTrip.
func (b *Breaker) closedSuccess(r *record, now int64, slow bool) error {
	x := r.extra
	clearCount(&r.consec)
	for i := range x.kinds {
		clearCount(&x.kinds[i])
	}
	if x.win == nil {
		return nil
	}
	// A success lowers the failure rate but may be slow, or may be the
	// call that brings the window up to MinimumCalls: the window's rules
	// are evaluated after every recorded call.
	x.win.add(now, false, slow)
	reason, perr := b.windowReason(r, now)
	if reason != noReason {
		b.open(r, reason, -1, 1, now, nil)
	}
	return perr
}

// closedFailure counts a failure under its kind (or the general
// consecutive rule) and in the window, and trips the breaker on the first
// rule that fires. The error is a *PanicError from a Match function or
// ReadyToTrip.
func (b *Breaker) closedFailure(r *record, now int64, slow bool, err error) (perr error) {
	reason, kind := noReason, -1
	x := r.extra
	rs := b.rules()
	if x != nil {
		kind, perr = matchKind(rs, err)
		// A Reconfigure that changes the kinds replaces the record (see
		// Reconfigure); this record may still be the one it replaces, with
		// counters for the old kinds: a kind it has no counter for
		// matches none.
		if kind >= len(x.kinds) {
			kind = -1
		}
		if kind >= 0 && x.kinds[kind].Add(1) >= int64(rs.opt.kinds[kind].Consecutive) {
			reason = ErrorKind
		}
	}
	if kind < 0 && countConsecutive(rs, &r.consec) {
		reason = ConsecutiveFailures
	}
	windowed := x != nil && x.win != nil
	if windowed {
		x.win.add(now, true, slow)
		if reason == noReason {
			var cerr error
			if reason, cerr = b.windowReason(r, now); perr == nil {
				perr = cerr
			}
		}
	}
	if reason != noReason {
		if !windowed {
			now = b.now() // the consecutive rules read the clock only to trip
		}
		b.open(r, reason, int16(kind), 1, now, err)
	}
	return perr
}

// matchKind returns the index of the first ErrorKinds rule that matches
// err, or -1. A nil err matches none. A Match that panics is recovered: the
// failure then matches no kind (it counts towards ConsecutiveFailures), and
// the panic is returned as a *PanicError.
func matchKind(rs *rules, err error) (int, error) {
	if err == nil || rs.opt == nil {
		return -1, nil
	}
	for i, k := range rs.opt.kinds {
		match, perr := Guard("", func() (bool, error) { return k.Match(err), nil }, nil)
		if perr != nil {
			perr.(*PanicError).Callback = fmt.Sprintf("ErrorKinds[%d].Match (%s)", i, k.Name)
			return -1, perr
		}
		if match {
			return i, nil
		}
	}
	return -1, nil
}

// countConsecutive counts a failure that matched no ErrorKinds rule, when
// the consecutive rule or ReadyToTrip wants it counted, and reports
// whether the consecutive rule fires.
func countConsecutive(rs *rules, c *atomic.Int64) bool {
	if rs.consecutive == 0 && !rs.opt.custom() {
		return false
	}
	n := c.Add(1)
	return rs.consecutive > 0 && n >= int64(rs.consecutive)
}

// rateReason returns the first rate rule that the window's counts satisfy.
func (o *optRule) rateReason(calls, failures, slow int64) Reason {
	switch {
	case calls < o.minCalls:
		return noReason
	// The division rounds the share to the nearest float64, as writing the
	// rate as a fraction (2.0/3) rounds it, and rounding is monotonic: a
	// share equal to the rate compares equal, one below it below.
	case o.failureRate > 0 && float64(failures)/float64(calls) >= o.failureRate:
		return FailureRate
	case o.slowRate > 0 && float64(slow)/float64(calls) >= o.slowRate:
		return SlowCallRate
	}
	return noReason
}

func (b *Breaker) recordProbe(r *record, o Outcome, err error) {
	switch o {
	case Success:
		// Exactly one probe sees the count reach the target, so exactly
		// one tries to close.
		// ≥, not ==: a Reconfigure may have lowered the number of probes
		// below the successes already counted. Only one CAS from r wins.
		if uint32(r.probes.Add(1)) >= b.rules().probes {
			b.transition(r, b.closedRecord(&record{reason: ProbesSucceeded, kind: -1}), b.now(), nil)
		}
	case Failure:
		b.open(r, ProbeFailed, -1, r.attempts+1, b.now(), err)
	case Ignored:
		r.probes.Add(^uint64(probeAdmit - 1)) // admitted−1: the place is free again
	}
}

// open replaces from with an Open record; false if from was no longer
// current. cause is the error of the call that tripped it, if any.
func (b *Breaker) open(from *record, reason Reason, kind int16, attempts uint32, now int64, cause error) bool {
	next := &record{state: Open, reason: reason, kind: kind, attempts: attempts}
	// Both terms are bounded (ResetTimeout ≤ 100 years, jitter ≤ ×2), so
	// the sum cannot overflow a clock that starts at 0.
	next.until = now + b.rules().period(attempts, rand.Float64)
	return b.transition(from, next, now, cause)
}

// closedRecord equips a Closed (or Disabled) record with its counters.
func (b *Breaker) closedRecord(r *record) *record {
	rs := b.rules()
	r.timed = rs.timed
	if o := rs.opt; o.counting() {
		r.extra = &closedCounter{kinds: make([]atomic.Int64, len(o.kinds)), win: newWindow(o)}
	}
	return r
}

// transition publishes next in place of from, at time now, because of
// cause (the error of the call that caused it; nil for most reasons). Only
// one caller can replace a given record, so exactly one event follows each
// real transition however many goroutines race at its edge.
func (b *Breaker) transition(from, next *record, now int64, cause error) bool {
	next.gen = from.gen + 1
	next.from = from.state
	next.at = now
	if next.state != Open {
		next.until = 0
	}
	if !b.cur.CompareAndSwap(from, next) {
		return false
	}
	h := b.history()
	h.transitions[next.reason].Add(1)
	if l := b.rules().listener; l != nil {
		e := b.event(from, next)
		e.Err = cause
		h.publish(l, e)
	}
	return true
}

func (b *Breaker) event(from, to *record) Event {
	e := Event{
		Name:       b.rules().name,
		From:       from.state,
		To:         to.state,
		Reason:     to.reason,
		Kind:       b.kindName(to.kind),
		Time:       b.epoch.Add(time.Duration(to.at)),
		Duration:   time.Duration(to.at - from.at),
		Generation: to.gen,
	}
	if to.state == Open {
		e.OpenUntil = b.epoch.Add(time.Duration(to.until))
	}
	return e
}

func (b *Breaker) kindName(k int16) string {
	if k < 0 {
		return ""
	}
	if o := b.rules().opt; o != nil && int(k) < len(o.kinds) {
		return o.kinds[k].Name
	}
	return "" // a kind of the rules before a Reconfigure
}

// history is what only a breaker that has changed state needs: the count
// of transitions by reason and the event queue. It is made at the first
// transition: most breakers never trip, and an idle one should cost one
// allocation.
type history struct {
	delivery
	transitions [numReasons]atomic.Uint64
}

func (b *Breaker) history() *history {
	if h := b.hist.Load(); h != nil {
		return h
	}
	b.hist.CompareAndSwap(nil, &history{delivery: delivery{next: 1}})
	return b.hist.Load()
}
