package fleet

import (
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// Replaying what the link missed. A transition that happens while the link
// is down (or whose publish Redis refuses) is kept, the newest per
// supplier, and sent when the link is up again if the breaker is still
// where the transition left it: an opening whose open period is still on
// (the catch-up reasserts those too), a closing whose breaker has stayed
// closed since. Without the replay, a replica that closed on its own probe
// during an outage of Redis would leave every other replica open until
// their own probes. The close is also written to the supplier's key (see
// redisBackend.withdraw), so that a replica that reconnects after the
// replay, and so misses the message, reads it there.

// miss keeps an unsent transition for the replay. Beyond Buffer suppliers
// it is dropped and counted.
func (l *Link) miss(e breaker.Event) {
	l.missedMu.Lock()
	defer l.missedMu.Unlock()
	if _, ok := l.missed[e.Name]; !ok && len(l.missed) >= l.cfg.Buffer {
		l.n.dropped.Add(1)
		return
	}
	l.missed[e.Name] = e
}

// replayMissed sends, on the publisher's goroutine, the kept transitions
// that are still current. One that fails stays kept for the next session
// (or the publisher's retry); it reports whether any did.
func (l *Link) replayMissed() (failed bool) {
	l.missedMu.Lock()
	missed := l.missed
	l.missed = map[string]breaker.Event{}
	l.missedMu.Unlock()
	for name, e := range missed {
		ex, ok := l.g.Lookup(name)
		if !ok {
			continue // evicted meanwhile
		}
		s := ex.Breaker().Stats()
		if s.Generation != e.Generation || s.State != e.To {
			continue // it moved on; its later transition speaks for it
		}
		if e.To == breaker.Open {
			e.OpenUntil = s.OpenUntil // a hold may have moved it
		}
		if !l.isUp() || l.send(e) != nil {
			l.miss(e)
			failed = true
			continue
		}
		l.n.replayed.Add(1)
	}
	return failed
}

// closeKept is how long a supplier's key keeps a close. A replica could
// still be held open by the trip it ends for maxProbeIn; one whose link was
// down when the close went out keeps that open state until it reads the
// key, and once Redis is back for it, it may first wait out a backoff at
// its longest (BackoffMax with half of it as jitter), then fail one attempt
// and catch up on the next, each bounded by OpTimeout.
func (l *Link) closeKept(name string) time.Duration {
	return maxProbeIn(l.gcfg, name, l.cfg.Margin) + l.cfg.BackoffMax*3/2 + 2*l.cfg.OpTimeout
}
