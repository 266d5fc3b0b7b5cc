package fleet

import (
	"context"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// The probe lease. One replica probes a supplier per reset period: shortly
// before the probe is due (Config.Margin), each replica whose breaker is
// open first holds its breaker open for one more lease period (a local
// step, no network), then contends for the lease, a key set only if absent
// with an expiry. The winner gives its breaker its probe time back, and its
// next call is the fleet's probe; the losers stay held and look again when
// the hold ends. The winner's verdict reaches them as a message (closed, or
// open until the next probe time); if the winner dies, its lease expires
// and the next contention finds it free. While the probe has not started
// (no call came to the winner), the winner renews its lease, and it renews
// it once more when the probe starts, so that the lease outlasts the probe.
//
// If Redis cannot be reached, nothing is held: every replica probes on its
// own, as without a fleet.

// round is the scheduler's view of one open period of one supplier.
type round struct {
	gen     uint64    // the breaker generation it belongs to
	probeAt time.Time // when the fleet's probe is due
	held    time.Time // the probe time this replica set on its breaker
	holder  bool      // this replica holds the lease
	due     time.Time // when to look again
	start   time.Time // when this replica first saw the open period
	alone   bool      // the fleet's probe never came: this replica probes on its own
}

// schedule runs the lease scheduler until Close.
func (l *Link) schedule() {
	defer l.wg.Done()
	defer l.alive[goScheduler].Store(false)
	rounds := map[string]*round{}
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case name := <-l.wake:
			if name != "" {
				l.review(rounds, name)
			}
		case <-t.C:
		}
		l.scan(rounds)
		now := time.Now()
		var next time.Time
		if pending, actions := l.pendingDue(), l.overridesDue(); pending || actions {
			next = now.Add(pendingPoll)
		}
		for name, r := range rounds {
			if !r.due.After(now) {
				l.review(rounds, name)
			}
			if r, ok := rounds[name]; ok && (next.IsZero() || r.due.Before(next)) {
				next = r.due
			}
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		if !next.IsZero() {
			t.Reset(max(time.Until(next), 0))
		}
	}
}

// scan reviews every supplier when asked to (rescan), after forgetting
// what the view was told if a new session began (viewReset).
func (l *Link) scan(rounds map[string]*round) {
	if l.viewReset.Swap(false) {
		clear(l.written) // a new session: Redis may have lost the view
	}
	if l.rescan.Swap(false) {
		for _, name := range l.g.Names() {
			if l.stopped() { // thousands of suppliers: Close need not wait for all
				return
			}
			l.review(rounds, name)
		}
	}
}

// review decides what to do about one supplier now.
func (l *Link) review(rounds map[string]*round, name string) {
	ex, ok := l.g.Lookup(name)
	if !ok {
		delete(rounds, name) // evicted, or the group is closing
		return
	}
	b := ex.Breaker()
	s := b.Stats()
	l.report(l.written, name, s)
	r := rounds[name]
	ttl := leaseTTL(l.gcfg, name, l.cfg.Margin)
	if s.State != breaker.Open {
		if s.State == breaker.HalfOpen && r != nil && r.holder && s.Generation == r.gen+1 {
			l.renew(name, ttl) // our probe has started: the lease covers it
		}
		delete(rounds, name)
		return
	}
	if ex.Stats().Shadow {
		// Its verdicts stay local (publishable): it neither holds its
		// probe for the fleet nor takes the fleet's probe lease.
		delete(rounds, name)
		return
	}
	now := time.Now()
	if r == nil || r.gen != s.Generation {
		r = &round{gen: s.Generation, start: now}
		rounds[name] = r
	}
	if r.alone {
		return
	}
	if r.holder {
		if now.Before(r.due) {
			return
		}
		// No call has come to start the probe yet: keep the lease.
		if l.renew(name, ttl) {
			r.due = now.Add(ttl - l.cfg.Margin)
			return
		}
		r.holder = false
	}
	if !l.isUp() {
		// Local only: give a held breaker its probe time back, so it
		// probes on its own as without a fleet. The rescan at reconnect
		// looks again.
		if !r.probeAt.IsZero() && s.OpenUntil.Equal(r.held) {
			b.HoldOpen(s.Generation, r.probeAt)
		}
		delete(rounds, name)
		return
	}
	hold := func(until time.Time) bool {
		if !b.HoldOpen(s.Generation, until) {
			delete(rounds, name) // it moved on; its event pokes us again
			return false
		}
		r.held = until
		return true
	}
	if !s.OpenUntil.Equal(r.held) {
		// A probe time this replica did not set: the breaker has just
		// opened, or a message moved it. Hold the breaker past it at once,
		// so that a scheduler that is late to contend delays the probe
		// rather than adding one.
		r.probeAt = s.OpenUntil
		r.start = now // the fleet's verdict came: its prober is alive
		if !hold(later(r.probeAt, now).Add(ttl + l.cfg.Margin)) {
			return
		}
	}
	if now.Before(r.probeAt.Add(-l.cfg.Margin)) {
		r.due = r.probeAt.Add(-l.cfg.Margin)
		return
	}
	// The probe is due: make sure the hold outlasts the contention.
	if until := later(r.probeAt, now).Add(ttl + l.cfg.Margin); until.After(r.held) && !hold(until) {
		return
	}
	won, left, err := l.acquire(name, ttl)
	l.cfg.Logger.Debug("fusebox: fleet lease", "replica", l.cfg.Replica, "supplier", name, "won", won,
		"error", errString(err), "probe_at", r.probeAt, "hold", r.held, "gen", s.Generation)
	switch {
	case err != nil:
		l.n.leaseErrors.Add(1)
		b.HoldOpen(s.Generation, r.probeAt) // probe on our own
		delete(rounds, name)
	case won:
		l.n.leasesWon.Add(1)
		b.HoldOpen(s.Generation, r.probeAt)
		r.holder = true
		r.due = now.Add(ttl - l.cfg.Margin)
	default:
		// Lost: stay held, and contend again when the holder's lease
		// runs out (the holder renews it while it waits for a call to
		// probe with and when the probe starts, so this is when a dead
		// holder's lease has expired; the verdict of a live one arrives
		// long before).
		l.n.leasesLost.Add(1)
		if now.Sub(r.start) > maxProbeIn(l.gcfg, name, l.cfg.Margin)+ttl {
			// Lost for longer than this replica would ever wait on its
			// own: whoever holds the lease (a winner that never probes, a
			// key written by something else) does not hold this replica.
			b.HoldOpen(s.Generation, r.probeAt)
			r.alone = true
			r.due = now.Add(viewTTL) // nothing to do until the breaker moves on (its event pokes the scheduler)
			return
		}
		if left <= 0 || left > ttl {
			left = ttl // no holder has more than a lease left
		}
		r.probeAt = now.Add(left + time.Millisecond)
		r.due = r.probeAt
		if until := r.probeAt.Add(l.cfg.Margin); until.After(r.held) {
			hold(until)
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// acquire contends for the lease; left is what the holder's lease has
// left when it is taken.
func (l *Link) acquire(name string, ttl time.Duration) (bool, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout)
	defer cancel()
	return l.be.acquire(ctx, name, l.cfg.Replica, ttl)
}

// renew extends this replica's lease; false if it no longer holds it.
func (l *Link) renew(name string, ttl time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout)
	defer cancel()
	ok, _ := l.be.renew(ctx, name, l.cfg.Replica, ttl)
	if ok {
		l.n.renewals.Add(1)
	}
	return ok
}
