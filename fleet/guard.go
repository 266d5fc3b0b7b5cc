package fleet

import (
	"context"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// The receiver's guards. Whatever a message says, and whether or not it is
// signed, one message cannot do more here than the fleet's rules allow: a
// remote trip that would open a breaker needs the quorum counted by this
// replica (distinct senders within the window) and a token of the trip
// rate; a remote close does not close a breaker that opened on this
// replica's own evidence, whose own probe decides. They run on the
// applier's goroutine, which owns their state.

// bucket is a token bucket: burst tokens, refilled at rate a second.
type bucket struct {
	rate, burst, tokens float64
	last                time.Time
}

// take spends a token if there is one.
func (b *bucket) take(now time.Time) bool {
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// admitOpen decides whether a remote trip may open b (Closed or HalfOpen:
// a trip that reaches an Open breaker only moves its probe time, within
// maxProbeIn, and passes). It counts what it refuses.
func (l *Link) admitOpen(b *breaker.Breaker, w word, now time.Time) bool {
	if st := b.State(); st != breaker.Closed && st != breaker.HalfOpen {
		return true
	}
	if q := l.cfg.Quorum; q.active() && !w.stored && !l.quorate(w, q, now) {
		l.n.awaiting.Add(1)
		return false
	}
	if !w.stored && !l.trips.take(now) {
		l.n.limited.Add(1)
		return false
	}
	return true
}

// quorate records w's sender as a vote for its supplier and reports
// whether distinct senders within the quorum's window reach the quorum.
// It keeps at most Buffer suppliers, and per supplier no more senders than
// the quorum needs.
func (l *Link) quorate(w word, q Quorum, now time.Time) bool {
	need := q.need(int(l.live.Load()))
	if q.Share > 0 && l.be != nil {
		// The live replicas as of now, not as of this replica's last
		// heartbeat: replicas may have stopped since.
		ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout)
		n, err := l.quorum(ctx)
		cancel()
		if err == nil {
			need = n
		}
	}
	for name, vs := range l.votes {
		for from, at := range vs {
			if now.Sub(at) > q.Window {
				delete(vs, from)
			}
		}
		if len(vs) == 0 {
			delete(l.votes, name)
		}
	}
	vs, ok := l.votes[w.name]
	if !ok {
		if len(l.votes) >= l.cfg.Buffer {
			return false
		}
		vs = map[string]time.Time{}
		l.votes[w.name] = vs
	}
	if _, ok := vs[w.from]; ok || len(vs) < need {
		vs[w.from] = now
	}
	if len(vs) < need {
		return false
	}
	delete(l.votes, w.name) // the quorum opens it: the next trip starts over
	return true
}

// ownOpen reports whether b's open period (Open, or HalfOpen with a probe
// of this replica's in flight) is of this replica's own making: a remote
// close does not end it, its own probe does.
func ownOpen(b *breaker.Breaker) bool {
	s := b.Stats()
	return s.State == breaker.HalfOpen || (s.State == breaker.Open && s.Reason != breaker.Remote)
}
