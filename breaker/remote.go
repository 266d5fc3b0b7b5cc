package breaker

import "time"

// This file is what a link between replicas of one service (the fleet
// module) needs from a breaker: to open it or close it on another replica's
// word, and to keep it open while the replicas agree on which of them sends
// the probe. Nothing here is on the request path: Allow and Done are
// unchanged, and these methods are called by the link's own goroutines.
//
// The rules, in the order they are applied:
//
//  1. An operator's override wins: a ForcedOpen or Disabled breaker ignores
//     remote word until Reset.
//  2. Newer evidence wins: a remote event is applied only if it is newer
//     than the breaker's current state (since, the time the remote evidence
//     arose, is after the moment the breaker entered its state). A replica
//     that opened, probed or closed on its own calls after the remote event
//     keeps its own verdict. A breaker that has never changed state has no
//     evidence of its own (being made is none: a replica makes a
//     supplier's breaker on first use, or starts during an outage), so any
//     remote event is newer.
//  3. An open period is never shortened by remote word: a remote trip of an
//     Open breaker moves its probe time to the later of the two.

// OpenRemote opens the breaker with reason Remote because another replica's
// breaker for the same supplier opened at since; until is that replica's
// probe time. Both are local times (the caller translates the other
// replica's durations with its own clock). A Closed or HalfOpen breaker
// opens until then (or now, if until has passed): one event, reason Remote;
// a half-open probe still running becomes late. An Open breaker only moves
// its probe time, if until is later, without an event. It reports whether
// it changed anything.
func (b *Breaker) OpenRemote(since, until time.Time) bool {
	if b.unmade() {
		return false
	}
	s, u := b.clock(since), b.clock(until)
	for {
		cur := b.cur.Load()
		if cur.newerThan(s) {
			return false // newer local evidence (rule 2)
		}
		now := b.now()
		switch cur.state {
		case Closed, HalfOpen:
			attempts := max(cur.attempts, 1)
			next := &record{state: Open, reason: Remote, kind: -1, attempts: attempts, until: max(u, now)}
			if b.transition(cur, next, now, nil) {
				return true
			}
		case Open:
			if cur.until == never || u <= cur.until {
				return false
			}
			if b.moveUntil(cur, u) {
				return true
			}
		default: // ForcedOpen, Disabled (rule 1)
			return false
		}
	}
}

// CloseRemote closes an Open or HalfOpen breaker with reason Remote because
// another replica's probe, admitted at since (local time), succeeded. A
// breaker that entered its state after since keeps it, and so do Closed,
// ForcedOpen and Disabled ones. It reports whether it closed the breaker.
func (b *Breaker) CloseRemote(since time.Time) bool {
	if b.unmade() {
		return false
	}
	s := b.clock(since)
	for {
		cur := b.cur.Load()
		if cur.newerThan(s) || (cur.state != Open && cur.state != HalfOpen) || cur.until == never {
			return false
		}
		if b.transition(cur, b.closedRecord(&record{reason: Remote, kind: -1}), b.now(), nil) {
			return true
		}
	}
}

// HoldOpen moves the probe time of the open period of generation gen to
// until, without an event: a fleet link keeps its breaker open while the
// replicas decide which of them probes, and gives the probe time back to the
// replica that won. It does nothing (and reports false) unless the breaker
// is still Open in generation gen. The probe time never moves before
// ResetTimeout after the breaker opened, so the probe still finds the slots
// of the calls admitted before the trip free.
func (b *Breaker) HoldOpen(gen uint64, until time.Time) bool {
	if b.unmade() {
		return false
	}
	u := b.clock(until)
	for {
		cur := b.cur.Load()
		if cur.state != Open || cur.gen != gen || cur.until == never {
			return false
		}
		u = max(u, cur.at+b.rules().reset)
		if u == cur.until || b.moveUntil(cur, u) {
			return true
		}
	}
}

// newerThan reports whether the breaker entered its current state after s
// (rule 2). Generation 0 is the state the breaker was made in, which says
// nothing about the supplier.
func (r *record) newerThan(s int64) bool {
	return r.gen > 0 && r.at > s
}

// moveUntil replaces the Open record cur by a copy that ends at until. It
// is not a transition: the generation stays, and no event is sent. An Open
// record has no permits, so no caller can tell the copy from the original.
func (b *Breaker) moveUntil(cur *record, until int64) bool {
	next := &record{gen: cur.gen, state: Open, from: cur.from, reason: cur.reason, kind: cur.kind,
		attempts: cur.attempts, at: cur.at, until: until}
	return b.cur.CompareAndSwap(cur, next)
}

// clock converts a time to the breaker's clock (ns since its epoch),
// clamped to what an open period can hold.
func (b *Breaker) clock(t time.Time) int64 {
	d := t.Sub(b.epoch)
	return int64(min(max(d, -maxTimeout), 2*maxTimeout))
}
