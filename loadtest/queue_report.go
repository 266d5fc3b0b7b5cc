package loadtest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// QueueReport is the result of RunQueue: the same traffic with and without a
// low-water mark.
type QueueReport struct {
	Config      map[string]any `json:"config"`
	WallSeconds float64        `json:"wall_s"`
	Runs        []QueueRun     `json:"runs"`
	cfg         QueueConfig
}

// QueueRun is one variant's run. Times are scenario seconds since its start.
type QueueRun struct {
	Name        string        `json:"name"`
	LowWater    int           `json:"low_water"`
	Summary     QueueSummary  `json:"summary"`
	Cycles      []Cycle       `json:"cycles"`
	Seconds     []QueueSecond `json:"seconds"`
	Transitions []Transition  `json:"transitions"`
}

// QueueSummary condenses one variant's run.
type QueueSummary struct {
	// FullAfter is when the queue was first found full (the first
	// queue-full trip); nil if it never was.
	FullAfter *float64 `json:"full_after_s"`
	// Cycles counts closed → open transitions.
	Cycles int `json:"cycles"`
	// Open and Closed describe the complete open periods (open until closed
	// again) and the complete closed periods between two trips.
	Open   DurationStats `json:"open"`
	Closed DurationStats `json:"closed"`
	// OpenShareAfterFull is the share of the time from the first trip to the
	// end of the run that the breaker spent refusing calls.
	OpenShareAfterFull float64 `json:"open_share_after_full"`

	Offered       int `json:"offered"`
	Accepted      int `json:"accepted"`
	RejectedOpen  int `json:"rejected_open"`
	RejectedFull  int `json:"rejected_full"` // the call that found the queue full (and tripped)
	RejectedBusy  int `json:"rejected_busy"` // found it full of young calls: refused alone, breaker untouched
	Served        int `json:"served"`
	TimedOut      int `json:"timed_out"`
	QueueTimedOut int `json:"queue_timed_out"`
	Errors        int `json:"errors"`
	CutOff        int `json:"cut_off"` // still queued or running when the run ended
	// Skipped counts arrivals not sent because the machine stalled the load
	// generator (always 0 in virtual time); see maxLag.
	Skipped int `json:"skipped"`
	// ServedPerSecond is served / duration: the supplier's measured rate.
	ServedPerSecond float64 `json:"served_per_s"`
	// Wait is the time from Submit to the result of the served calls.
	WaitP50 float64 `json:"wait_p50_s"`
	WaitP99 float64 `json:"wait_p99_s"`
	WaitMax float64 `json:"wait_max_s"`
}

// DurationStats summarises a set of durations, in seconds.
type DurationStats struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean_s"`
	Min  float64 `json:"min_s"`
	Max  float64 `json:"max_s"`
}

// Cycle is one trip of the breaker: when it opened, how long it refused
// calls, and how long it then stayed closed. A nil duration ran to the end of
// the run.
type Cycle struct {
	OpenedAt  float64  `json:"opened_at_s"`
	Reason    string   `json:"reason"`
	OpenFor   *float64 `json:"open_for_s"`
	ClosedBy  string   `json:"closed_by,omitempty"`
	ClosedFor *float64 `json:"closed_for_s"`
}

// QueueSecond is one second of a queue run.
type QueueSecond struct {
	T         int     `json:"t"`
	QueueMax  int     `json:"queue_max"` // longest queue seen in the second
	Offered   int     `json:"offered"`
	Accepted  int     `json:"accepted"`
	Rejected  int     `json:"rejected"`
	Served    int     `json:"served"` // by completion second
	OpenShare float64 `json:"open_share"`
	Breaker   string  `json:"breaker"` // state at the second's end
}

// queueRecorder collects one queue run. Safe for concurrent use.
type queueRecorder struct {
	clk         clock
	duration    time.Duration
	mu          sync.Mutex
	secs        []queueSecondAcc
	rejected    [numRejected]int
	served      int
	timedOut    int
	queueTO     int
	errs        int
	cutOff      int
	skipped     int
	waits       []time.Duration
	transitions []transition
}

type queueSecondAcc struct {
	queueMax, offered, accepted, rejected, served int
}

func newQueueRecorder(clk clock, duration time.Duration) *queueRecorder {
	return &queueRecorder{clk: clk, duration: duration, secs: make([]queueSecondAcc, seconds(duration))}
}

func (r *queueRecorder) sec(t time.Duration) *queueSecondAcc {
	return secondAt(r.secs, r.duration, t)
}

func (r *queueRecorder) queued(t time.Duration, n int) {
	r.mu.Lock()
	if s := r.sec(t); s != nil && n > s.queueMax {
		s.queueMax = n
	}
	r.mu.Unlock()
}

func (r *queueRecorder) refused(t time.Duration, err error) {
	r.mu.Lock()
	if s := r.sec(t); s != nil {
		s.offered++
		s.rejected++
		r.rejected[rejection(err)]++
	}
	r.mu.Unlock()
}

func (r *queueRecorder) accepted(t time.Duration) {
	r.mu.Lock()
	if s := r.sec(t); s != nil {
		s.offered++
		s.accepted++
	}
	r.mu.Unlock()
}

// done records the end of an accepted call submitted at at.
func (r *queueRecorder) done(at, end time.Duration, err error, runOver bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sec(end)
	switch {
	case runOver || s == nil:
		r.cutOff++
	case err == nil:
		s.served++
		r.served++
		r.waits = append(r.waits, end-at)
	case errors.Is(err, executor.ErrQueueTimeout):
		r.queueTO++
	case errors.Is(err, context.DeadlineExceeded):
		r.timedOut++
	default:
		r.errs++
	}
}

// skip records an arrival the generator did not send because it was late.
func (r *queueRecorder) skip() {
	r.mu.Lock()
	r.skipped++
	r.mu.Unlock()
}

func (r *queueRecorder) transition(ev breaker.Event) {
	at := r.clk.at(ev.Time)
	r.mu.Lock()
	if at < r.duration { // the end of the run (cancelling what is queued) may cause one more
		r.transitions = append(r.transitions, transition{at: at, from: ev.From, to: ev.To, reason: ev.Reason})
	}
	r.mu.Unlock()
}

// summarizeQueue builds a variant's report from its recorder.
func summarizeQueue(name string, lowWater int, r *queueRecorder) QueueRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	states := stateTimeline(r.transitions, len(r.secs))
	run := QueueRun{Name: name, LowWater: lowWater, Seconds: make([]QueueSecond, len(r.secs)),
		Transitions: exportTransitions(r.transitions), Cycles: cycles(r.transitions)}
	s := QueueSummary{
		RejectedOpen: r.rejected[rejectedOpen], RejectedFull: r.rejected[rejectedFull], RejectedBusy: r.rejected[rejectedBusy],
		Served: r.served, TimedOut: r.timedOut, QueueTimedOut: r.queueTO, Errors: r.errs + r.rejected[rejectedOther],
		CutOff: r.cutOff, Skipped: r.skipped, ServedPerSecond: float64(r.served) / r.duration.Seconds(),
		WaitP50: secs(percentile(r.waits, 50)), WaitP99: secs(percentile(r.waits, 99)),
	}
	if len(r.waits) > 0 {
		s.WaitMax = secs(r.waits[len(r.waits)-1]) // percentile sorted them
	}
	for i, a := range r.secs {
		run.Seconds[i] = QueueSecond{T: i, QueueMax: a.queueMax, Offered: a.offered, Accepted: a.accepted,
			Rejected: a.rejected, Served: a.served, OpenShare: states[i].openShare, Breaker: states[i].end.String()}
		s.Offered += a.offered
		s.Accepted += a.accepted
	}
	var opens, closeds []float64
	for _, c := range run.Cycles {
		if c.OpenFor != nil {
			opens = append(opens, *c.OpenFor)
		}
		if c.ClosedFor != nil {
			closeds = append(closeds, *c.ClosedFor)
		}
	}
	s.Cycles = len(run.Cycles)
	s.Open, s.Closed = durationStats(opens), durationStats(closeds)
	if s.Cycles > 0 {
		first := r.transitions[slices.IndexFunc(r.transitions, func(t transition) bool { return t.from == breaker.Closed && t.to == breaker.Open })]
		if first.reason == breaker.QueueFull {
			s.FullAfter = secsPtr(first.at, true)
		}
		s.OpenShareAfterFull = refusingShare(r.transitions, first.at, r.duration)
	}
	run.Summary = s
	return run
}

// cycles cuts transitions into trips: closed → open ... → closed, then
// closed until the next trip.
func cycles(ts []transition) []Cycle {
	var out []Cycle
	var openedAt, closedAt time.Duration
	for _, t := range ts {
		switch {
		case t.from == breaker.Closed && t.to == breaker.Open:
			if n := len(out); n > 0 && out[n-1].OpenFor != nil {
				out[n-1].ClosedFor = secsPtr(t.at-closedAt, true)
			}
			out = append(out, Cycle{OpenedAt: secs(t.at), Reason: t.reason.String()})
			openedAt = t.at
		case t.to == breaker.Closed && len(out) > 0:
			c := &out[len(out)-1]
			c.OpenFor = secsPtr(t.at-openedAt, true)
			c.ClosedBy = t.reason.String()
			closedAt = t.at
		}
	}
	return out
}

// refusingShare is the share of [from, to) the breaker spent refusing calls.
func refusingShare(ts []transition, from, to time.Duration) float64 {
	if to <= from {
		return 0
	}
	var open time.Duration
	st, since := breaker.Closed, from
	for _, t := range ts {
		if t.at >= to {
			break
		}
		if t.at > from && refusing(st) {
			open += t.at - max(since, from)
		}
		st, since = t.to, t.at
	}
	if refusing(st) {
		open += to - max(since, from)
	}
	return float64(open) / float64(to-from)
}

// durationStats summarises ds (seconds).
func durationStats(ds []float64) DurationStats {
	if len(ds) == 0 {
		return DurationStats{}
	}
	st := DurationStats{N: len(ds), Min: slices.Min(ds), Max: slices.Max(ds)}
	for _, d := range ds {
		st.Mean += d
	}
	st.Mean /= float64(len(ds))
	return st
}
