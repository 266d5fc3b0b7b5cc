package loadtest

import (
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// recorder collects what happens during one mode's run, by second of
// scenario time. Safe for concurrent use.
type recorder struct {
	clk         clock
	duration    time.Duration
	outageStart time.Duration
	outageEnd   time.Duration

	mu            sync.Mutex
	secs          []secondAcc
	firstRefusal  time.Duration // first refusal at or after the outage start
	refusedInRun  bool
	outageOffered int // catalog requests that arrived during the outage and were decided
	outageServed  int
	cutOff        [2]int // by kind: still running when the run ended
	skipped       [2]int // by kind: not sent, the generator was late
	transitions   []transition
}

// secondAcc accumulates one second.
type secondAcc struct {
	busyMax          int
	catalog          [numOutcomes]int // by arrival second
	catalogLatencies []time.Duration  // of served catalog requests
	paymentsOffered  int              // by arrival second
	payments         [numOutcomes]int // by the second the outcome was known
}

// transition is a breaker transition at a scenario time.
type transition struct {
	at       time.Duration
	from, to breaker.State
	reason   breaker.Reason
}

func newRecorder(clk clock, duration, outageStart, outageEnd time.Duration) *recorder {
	return &recorder{
		clk: clk, duration: duration, outageStart: outageStart, outageEnd: outageEnd,
		secs: make([]secondAcc, seconds(duration)),
	}
}

// seconds is the number of whole or partial seconds in d.
func seconds(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }

// sec returns the accumulator of scenario time t, or nil outside the run.
// Called with mu held.
func (r *recorder) sec(t time.Duration) *secondAcc { return secondAt(r.secs, r.duration, t) }

// secondAt returns the accumulator of the second holding scenario time t,
// or nil when t is outside [0, duration): shared by both recorders.
func secondAt[A any](secs []A, duration, t time.Duration) *A {
	if t < 0 || t >= duration {
		return nil
	}
	return &secs[t/time.Second]
}

// busy records that n shop workers were busy at t.
func (r *recorder) busy(t time.Duration, n int) {
	r.mu.Lock()
	if s := r.sec(t); s != nil && n > s.busyMax {
		s.busyMax = n
	}
	r.mu.Unlock()
}

// refused records that a request found no free worker at t.
func (r *recorder) refused(t time.Duration) {
	r.mu.Lock()
	if t >= r.outageStart && t < r.duration && !r.refusedInRun {
		r.refusedInRun, r.firstRefusal = true, t
	}
	r.mu.Unlock()
}

// request records one request of kind k that arrived at arrived and ended
// at done with o.
func (r *recorder) request(k kind, arrived, done time.Duration, o outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o == outCancelled || done >= r.duration {
		r.cutOff[k]++
		if k == kindPayment {
			if s := r.sec(arrived); s != nil {
				s.paymentsOffered++
			}
		}
		return
	}
	s := r.sec(arrived)
	if s == nil {
		return
	}
	if k == kindPayment {
		s.paymentsOffered++
		if d := r.sec(done); d != nil {
			d.payments[o]++
		}
		return
	}
	s.catalog[o]++
	if o == outServed {
		s.catalogLatencies = append(s.catalogLatencies, done-arrived)
	}
	if arrived >= r.outageStart && arrived < r.outageEnd {
		r.outageOffered++
		if o == outServed {
			r.outageServed++
		}
	}
}

// skip records a request the generator did not send because it was late.
func (r *recorder) skip(k kind) {
	r.mu.Lock()
	r.skipped[k]++
	r.mu.Unlock()
}

// transition records a breaker event.
func (r *recorder) transition(ev breaker.Event) {
	at := r.clk.at(ev.Time)
	r.mu.Lock()
	if at < r.duration { // the end of the run (cancelling what is queued) may cause one more
		r.transitions = append(r.transitions, transition{at: at, from: ev.From, to: ev.To, reason: ev.Reason})
	}
	r.mu.Unlock()
}

// catalogShare returns the share of catalog requests served that arrived in
// second i, and whether any did.
func (r *recorder) catalogShare(i int) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i < 0 || i >= len(r.secs) {
		return 0, false
	}
	c := r.secs[i].catalog
	n := decided(c)
	if n == 0 {
		return 0, false
	}
	return float64(c[outServed]) / float64(n), true
}

// decided counts the requests with an outcome in the run.
func decided(c [numOutcomes]int) int {
	n := 0
	for o, v := range c {
		if outcome(o) != outCancelled {
			n += v
		}
	}
	return n
}
