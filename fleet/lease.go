package fleet

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
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

// releaseScript deletes a lease if this replica holds it.
var releaseScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// renewScript extends a lease if this replica holds it.
var renewScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)

// round is the scheduler's view of one open period of one supplier.
type round struct {
	gen    uint64    // the breaker generation it belongs to
	holder bool      // this replica holds the lease
	due    time.Time // when to look again
}

// schedule runs the lease scheduler until Close.
func (l *Link) schedule() {
	defer l.wg.Done()
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
		if l.rescan.Swap(false) {
			l.g.Range(func(ex *executor.Executor) bool {
				l.review(rounds, ex.Name())
				return true
			})
		}
		now := time.Now()
		var next time.Time
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

// review decides what to do about one supplier now.
func (l *Link) review(rounds map[string]*round, name string) {
	ex, err := l.g.Executor(name)
	if err != nil {
		delete(rounds, name)
		return
	}
	b := ex.Breaker()
	s := b.Stats()
	r := rounds[name]
	ttl := leaseTTL(l.gcfg, name, l.cfg.Margin)
	if s.State != breaker.Open {
		if s.State == breaker.HalfOpen && r != nil && r.holder && s.Generation == r.gen+1 {
			l.renew(name, ttl) // our probe has started: the lease covers it
		}
		delete(rounds, name)
		return
	}
	if r == nil || r.gen != s.Generation {
		r = &round{gen: s.Generation}
		rounds[name] = r
	}
	now := time.Now()
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
		delete(rounds, name) // local only; the rescan at reconnect looks again
		return
	}
	probeAt := s.OpenUntil
	if now.Before(probeAt.Add(-l.cfg.Margin)) {
		r.due = probeAt.Add(-l.cfg.Margin)
		return
	}
	hold := later(probeAt, now).Add(ttl + l.cfg.Margin)
	if !b.HoldOpen(s.Generation, hold) {
		delete(rounds, name) // it moved on; its event pokes us again
		return
	}
	won, err := l.acquire(name, ttl)
	l.cfg.Logger.Debug("fusebox: fleet lease", "replica", l.cfg.Replica, "supplier", name, "won", won, "error", errString(err), "probe_at", probeAt, "hold", hold, "gen", s.Generation)
	switch {
	case err != nil:
		l.n.leaseErrors.Add(1)
		b.HoldOpen(s.Generation, probeAt) // probe on our own
		delete(rounds, name)
	case won:
		l.n.leasesWon.Add(1)
		b.HoldOpen(s.Generation, probeAt)
		r.holder = true
		r.due = now.Add(ttl - l.cfg.Margin)
	default:
		l.n.leasesLost.Add(1)
		r.due = hold.Add(-l.cfg.Margin)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// acquire contends for the lease: SET key replica NX PX ttl.
func (l *Link) acquire(name string, ttl time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout)
	defer cancel()
	err := l.rdb.Do(ctx, "SET", l.leaseKey(name), l.cfg.Replica, "PX", ttl.Milliseconds(), "NX").Err()
	switch err {
	case nil:
		return true, nil
	case redis.Nil:
		return false, nil
	}
	return false, err
}

// renew extends this replica's lease; false if it no longer holds it.
func (l *Link) renew(name string, ttl time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout)
	defer cancel()
	n, err := renewScript.Run(ctx, l.rdb, []string{l.leaseKey(name)}, l.cfg.Replica, ttl.Milliseconds()).Int()
	if err == nil && n == 1 {
		l.n.renewals.Add(1)
		return true
	}
	return false
}
