package fleet

import (
	"context"
	"log/slog"
	"time"

	"github.com/fusebox-go/fusebox/executor"
)

// The inbox. The subscription goroutine only reads and validates messages;
// a fourth goroutine, the applier, hands them to the breakers. Applying
// word from the fleet is a transition, and a transition runs the group's
// listeners: a listener that blocks then holds the applier, never the
// subscription, which keeps receiving, answering health checks and
// counting (messages beyond Buffer waiting are dropped, Stats.Overflow).
//
// The wire never makes an executor: a message about a supplier this
// replica has no executor for is remembered (the newest open state per
// name, in a table of at most Buffer names, each until its key would
// expire), and the scheduler applies it when the group makes the executor
// on first use.

// pendingPoll is how often the scheduler looks for executors made for the
// suppliers the table remembers, while it remembers any.
const pendingPoll = 10 * time.Millisecond

// word is a message translated to this replica's clock.
type word struct {
	name   string
	open   bool
	since  time.Time // when the evidence arose
	until  time.Time // open: the probe time
	reason string    // the sender's, for logs
	from   string    // the sender
	ov     *message  // an operator action (override.go), else nil
	limit  int64     // ov read from its key: the fleet's counter read with it
	stored bool      // read from a key at a catch-up, not from the channel
}

// pendingOpen is a remote trip of a supplier without an executor here.
type pendingOpen struct {
	w       word
	expires time.Time // when its open key would have expired
}

// translate turns a valid message received at at into local times,
// bounding the probe time by this replica's configuration for the
// supplier (see maxProbeIn); clipped reports whether it had to.
func (l *Link) translate(m message, at time.Time) (w word, clipped bool) {
	w = word{name: m.Supplier, open: m.Kind == kindOpen, since: at.Add(-time.Duration(m.Age)), reason: m.Reason, from: m.Replica}
	if isOverride(m.Kind) {
		w.ov = &m
		return w, false
	}
	if !w.open {
		return w, false
	}
	probeIn := time.Duration(m.ProbeIn)
	if limit := maxProbeIn(l.gcfg, m.Supplier, l.cfg.Margin); probeIn > limit {
		probeIn, clipped = limit, true
	}
	if probeIn < l.cfg.Margin {
		// The fleet's probe round is already on: wait for its verdict,
		// or for its lease to expire, before contending.
		probeIn = leaseTTL(l.gcfg, m.Supplier, l.cfg.Margin) + l.cfg.Margin
	}
	w.until = at.Add(probeIn)
	return w, clipped
}

// enqueue hands a word to the applier without blocking the caller.
func (l *Link) enqueue(w word) bool {
	select {
	case l.in <- w:
		return true
	default:
		return false
	}
}

// applyLoop runs the applier until Close.
func (l *Link) applyLoop() {
	defer l.wg.Done()
	defer l.alive[goApplier].Store(false)
	for {
		select {
		case <-l.stop:
			return
		case w := <-l.in:
			switch l.apply(w) {
			case applied:
				l.n.applied.Add(1)
			case deferred:
				l.n.deferred.Add(1)
			case refused: // counted where refused
			default:
				l.n.stale.Add(1)
			}
		}
	}
}

type outcome int

const (
	stale outcome = iota
	applied
	deferred
	refused // by a guard (guard.go, override.go's vouch), counted there
)

// apply hands a word to the supplier's breaker (see the rules in the
// package documentation), or remembers a trip of a supplier this replica
// has no executor for.
func (l *Link) apply(w word) outcome {
	if w.ov != nil {
		return l.applyOverride(*w.ov, w.limit)
	}
	ex, ok := l.g.Lookup(w.name)
	if !ok {
		return l.remember(w)
	}
	b := ex.Breaker()
	if w.open && !l.admitOpen(b, w, time.Now()) {
		return refused
	}
	if !w.open && ownOpen(b) {
		return stale // this replica's own probe decides
	}
	l.applying.Store(&w.name)
	var changed bool
	if w.open {
		changed = b.OpenRemote(w.since, w.until)
	} else {
		changed = b.CloseRemote(w.since)
	}
	l.applying.Store(nil)
	l.poke(w.name)
	if l.cfg.Logger.Enabled(context.Background(), slog.LevelDebug) {
		s := b.Stats()
		l.cfg.Logger.Debug("fusebox: fleet message", "replica", l.cfg.Replica, "from", w.from, "open", w.open,
			"reason", w.reason, "supplier", w.name, "changed", changed, "state", s.State, "probe_at", s.OpenUntil)
	}
	if changed {
		return applied
	}
	return stale
}

// remember keeps the newest open state of a supplier that has no executor
// here; a close forgets an older one. A Strict group never makes an
// executor for a name it does not list: nothing to remember.
func (l *Link) remember(w word) outcome {
	if l.gcfg.Strict {
		return stale
	}
	now := time.Now()
	l.pmu.Lock()
	defer l.pmu.Unlock()
	old, had := l.pending[w.name]
	if !w.open {
		if had && !old.w.since.After(w.since) {
			delete(l.pending, w.name)
		}
		return stale
	}
	if had && old.w.since.After(w.since) {
		return stale // it remembers newer evidence
	}
	p := pendingOpen{w: w, expires: w.until.Add(leaseTTL(l.gcfg, w.name, l.cfg.Margin) + l.cfg.Margin)}
	if !had && len(l.pending) >= l.cfg.Buffer {
		// Full: make room by forgetting what expires first (expired
		// entries first of all), unless that is the newcomer.
		var first string
		for name, q := range l.pending {
			if first == "" || q.expires.Before(l.pending[first].expires) {
				first = name
			}
		}
		if !l.pending[first].expires.Before(p.expires) && l.pending[first].expires.After(now) {
			return stale
		}
		delete(l.pending, first)
	}
	l.pending[w.name] = p
	l.poke("") // the scheduler polls while the table is not empty
	return deferred
}

// pendingDue hands the applier the remembered trips whose executor now
// exists, forgets expired ones, and reports whether any remain.
func (l *Link) pendingDue() bool {
	l.pmu.Lock()
	defer l.pmu.Unlock()
	now := time.Now()
	for name, p := range l.pending {
		switch {
		case !p.expires.After(now):
			delete(l.pending, name)
		case l.has(name):
			if l.enqueue(p.w) {
				delete(l.pending, name) // else the next poll tries again
			}
		}
	}
	return len(l.pending) > 0
}

// has reports whether the group holds an executor for name.
func (l *Link) has(name string) bool {
	_, ok := l.g.Lookup(name)
	return ok
}

// maxProbeIn bounds how far ahead a remote probe time may be: the longest
// open period this replica's own breaker for the supplier can have (its
// MaxResetTimeout, or ResetTimeout without back-off, with the largest
// jitter), a probe lease (the longest hold a sender may have published) and
// a margin. A message past it comes from a replica configured otherwise,
// or from a bad publisher; either way this replica probes no later than it
// would on its own, plus one lease.
func maxProbeIn(g executor.GroupConfig, name string, margin time.Duration) time.Duration {
	b := supplierConfig(g, name).Breaker
	open := b.MaxResetTimeout
	if open == 0 {
		open = b.ResetTimeout
	}
	if open == 0 {
		open = defaultResetTimeout
	}
	open += time.Duration(float64(open) * min(max(b.ResetJitter, 0), 1))
	return open + leaseTTL(g, name, margin) + margin
}

// defaultResetTimeout is breaker.Config's documented ResetTimeout default.
const defaultResetTimeout = 5 * time.Second

// supplierConfig is the configuration the group gives a supplier.
func supplierConfig(g executor.GroupConfig, name string) executor.Config {
	if c, ok := g.Suppliers[name]; ok {
		return c // a supplier's entry is its whole configuration
	}
	return g.Default
}

// goroutines of the link, for Close's report.
const (
	goSubscription = iota
	goPublisher
	goScheduler
	goApplier
	numGoroutines
)

var goroutineNames = [numGoroutines]string{"subscription", "publisher", "lease scheduler", "applier"}
