package fleet

import (
	"context"
	"log/slog"
	"time"
)

// The inbox. The subscription goroutine only reads and validates messages;
// a fourth goroutine, the applier, hands them to the breakers. Applying
// word from the fleet is a transition, and a transition runs the group's
// listeners: a listener that blocks then holds the applier, never the
// subscription, which keeps receiving, answering health checks and
// counting (messages beyond Buffer waiting are dropped, Stats.Overflow).

// word is a message translated to this replica's clock.
type word struct {
	name   string
	open   bool
	since  time.Time // when the evidence arose
	until  time.Time // open: the probe time
	reason string    // the sender's, for logs
	from   string    // the sender
}

// translate turns a valid message received at at into local times.
func (l *Link) translate(m message, at time.Time) word {
	w := word{name: m.Supplier, open: m.Kind == kindOpen, since: at.Add(-time.Duration(m.Age)), reason: m.Reason, from: m.Replica}
	if !w.open {
		return w
	}
	probeIn := time.Duration(m.ProbeIn)
	if probeIn < l.cfg.Margin {
		// The fleet's probe round is already on: wait for its verdict,
		// or for its lease to expire, before contending.
		probeIn = leaseTTL(l.gcfg, m.Supplier, l.cfg.Margin) + l.cfg.Margin
	}
	w.until = at.Add(probeIn)
	return w
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
			if l.apply(w) {
				l.n.applied.Add(1)
			} else {
				l.n.stale.Add(1)
			}
		}
	}
}

// apply hands a word to the supplier's breaker (see the rules in the
// package documentation) and reports whether it changed anything.
func (l *Link) apply(w word) bool {
	ex, err := l.g.Executor(w.name)
	if err != nil {
		return false // the group is closing
	}
	b := ex.Breaker()
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
	return changed
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
