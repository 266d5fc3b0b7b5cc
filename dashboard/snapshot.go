package dashboard

import (
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/priority"
)

// Snapshot is what GET api/snapshot answers and what every event of the
// api/events stream carries, as JSON. Suppliers come trouble first (see
// Supplier.Rank), then by ID.
type Snapshot struct {
	Title      string    `json:"title"`
	Time       time.Time `json:"time"`        // when the sample was taken
	Seq        uint64    `json:"seq"`         // sample number, +1 per sample
	IntervalMS int64     `json:"interval_ms"` // Options.Interval
	History    int       `json:"history"`     // Options.History: points kept per series
	Control    bool      `json:"control"`     // Options.AllowControl
	Fleet      bool      `json:"fleet"`       // Options.FleetView is set
	// Full is true when every series holds its whole history; false in
	// stream updates, whose series hold only the newest point (if the
	// sample made one) for the page to append.
	Full  bool `json:"full"`
	Total int  `json:"total"` // suppliers known; Suppliers holds at most Options.MaxSuppliers
	// Counts says how many suppliers are in each state ("open": 2, ...),
	// over all of them, shown or not.
	Counts    map[string]int `json:"counts"`
	Suppliers []Supplier     `json:"suppliers"`
	// Shedders are the inbound shedders added with AddShedder, in the
	// order they were added; absent without any.
	Shedders []Shedder `json:"shedders,omitempty"`
}

// Supplier is one tile of the page: one executor's breaker and bulkhead.
type Supplier struct {
	ID    string `json:"id"`    // unique on the page; the supplier's name, suffixed on a clash
	Name  string `json:"name"`  // Executor.Name
	State string `json:"state"` // breaker.State's name: "closed", "open", "half-open", ...
	// Rank orders the tiles, trouble first: 0 open or forced open, 1 half
	// open, 2 saturated (no free slot, or a full queue), 3 disabled,
	// 4 overdue calls, 5 healthy.
	Rank      int  `json:"rank"`
	Saturated bool `json:"saturated"`
	// Shadow: the supplier runs in shadow mode (executor.Config.Shadow):
	// State is what enforce mode would be in, and nothing is refused;
	// Totals.Shadowed counts what enforce mode would have refused.
	Shadow    bool      `json:"shadow"`
	Since     time.Time `json:"since"`       // when the breaker entered State
	InStateMS int64     `json:"in_state_ms"` // Time - Since
	Reason    string    `json:"reason"`      // of the last transition; "none" before the first
	Kind      string    `json:"kind,omitempty"`
	// ProbeAt is when an Open breaker admits its next probe; ProbeInMS is
	// how far ahead of Time that is (≤ 0: the next call is the probe).
	// Both are absent in any other state.
	ProbeAt   *time.Time `json:"probe_at,omitempty"`
	ProbeInMS *int64     `json:"probe_in_ms,omitempty"`

	// Slots is the bulkhead's size: Config.Slots, or with Adaptive the limit in
	// force, which LimitReason says why it last changed (see
	// executor.Stats.LimitReason).
	Slots       int    `json:"slots"`
	Adaptive    bool   `json:"adaptive,omitempty"`
	LimitReason string `json:"limit_reason,omitempty"`
	InUse       int    `json:"in_use"`
	Free        int    `json:"free"`
	Queued      int    `json:"queued"`
	QueueCap    int    `json:"queue_cap"`
	Overdue     int    `json:"overdue"` // slots held by calls past their deadline

	// LatencyP50MS and LatencyP99MS are call latencies in milliseconds;
	// 0 when unknown.
	LatencyP50MS float64 `json:"latency_p50_ms"`
	LatencyP99MS float64 `json:"latency_p99_ms"`

	Totals Totals `json:"totals"`
	// Policy is what the retries and hedges of package policy did for the
	// supplier; absent without AddPolicies.
	Policy *Policy `json:"policy,omitempty"`
	Series Series  `json:"series"`
}

// Totals are the supplier's counters since its executor was made.
type Totals struct {
	Successes     uint64            `json:"successes"`
	Failures      uint64            `json:"failures"`
	Ignored       uint64            `json:"ignored"`
	Timeouts      uint64            `json:"timeouts"`
	Panics        uint64            `json:"panics"`
	Cancelled     uint64            `json:"cancelled"`
	QueueTimeouts uint64            `json:"queue_timeouts"`
	Late          uint64            `json:"late"`
	Rejected      map[string]uint64 `json:"rejected"` // by reason: open, saturated, queue-full, closed
	// Shadowed counts the calls shadow mode ran that enforce mode would
	// have refused, by reason: open, saturated, queue-full, busy.
	Shadowed map[string]uint64 `json:"shadowed"`

	// RejectedByPriority counts the same refusals by the priority of the
	// call: critical, default, sheddable.
	RejectedByPriority map[string]uint64 `json:"rejected_by_priority"`
}

// Series are per-second rates, one point per sample, oldest first: T holds
// the points' times (Unix milliseconds), Calls finished calls per second
// by outcome (success, failure, ignored) and Refused refused calls per
// second by reason (open, saturated, queue-full, closed). A supplier that
// saw no call for a whole history has no points.
type Series struct {
	T       []int64              `json:"t"`
	Calls   map[string][]float64 `json:"calls"`
	Refused map[string][]float64 `json:"refused"`
}

// The series of a track, in ring order: calls by outcome, then refusals
// by executor.Rejection, in executor.Rejection order.
var (
	outcomeNames = []string{"success", "failure", "ignored"}
	rejections   = []executor.Rejection{executor.RejectedOpen, executor.RejectedSaturated,
		executor.RejectedQueueFull, executor.RejectedClosed, executor.RejectedBusy, executor.RejectedThrottled}
	rejectionNames = func() []string {
		r := make([]string, len(rejections))
		for i, rej := range rejections {
			r[i] = rej.String()
		}
		return r
	}()
	numSeries = len(outcomeNames) + len(rejectionNames)
)

// counters reads the cumulative counts behind the series from s.
func counters(s *executor.Stats) []uint64 {
	c := make([]uint64, 0, numSeries)
	c = append(c, s.Successes, s.Failures, s.Ignored)
	for _, r := range rejections {
		c = append(c, s.Rejected.Of(r))
	}
	return c
}

// rank places a supplier in the trouble-first order.
func rank(s *executor.Stats, saturated bool) int {
	switch s.Breaker.State {
	case breaker.Open, breaker.ForcedOpen:
		return 0
	case breaker.HalfOpen:
		return 1
	}
	switch {
	case saturated:
		return 2
	case s.Breaker.State == breaker.Disabled:
		return 3
	case s.Overdue > 0:
		return 4
	}
	return 5
}

// saturated reports whether no slot is free, or the queue is full.
func saturated(s *executor.Stats) bool {
	return s.Free == 0 || (s.QueueCap > 0 && s.Queued >= s.QueueCap)
}

// supplierOf converts one executor's stats, taken at now, into a tile
// without series.
func supplierOf(id string, s *executor.Stats, now time.Time) Supplier {
	sat := saturated(s)
	p50, p99 := latency(*s)
	t := Supplier{
		ID: id, Name: s.Supplier, State: s.Breaker.State.String(),
		Rank: rank(s, sat), Saturated: sat, Shadow: s.Shadow,
		Since: s.Breaker.Since, InStateMS: now.Sub(s.Breaker.Since).Milliseconds(),
		Reason: s.Breaker.Reason.String(), Kind: s.Breaker.Kind,
		Slots: s.Slots, Adaptive: s.Adaptive, LimitReason: s.LimitReason, InUse: s.InUse, Free: s.Free, Queued: s.Queued, QueueCap: s.QueueCap, Overdue: s.Overdue,
		LatencyP50MS: ms(p50), LatencyP99MS: ms(p99),
		Totals: Totals{
			Successes: s.Successes, Failures: s.Failures, Ignored: s.Ignored,
			Timeouts: s.Timeouts, Panics: s.Panics, Cancelled: s.Cancelled,
			QueueTimeouts: s.QueueTimeouts, Late: s.Breaker.Late,
			Rejected: make(map[string]uint64, len(rejectionNames)),
			Shadowed: make(map[string]uint64, len(rejectionNames)-1),
		},
	}
	for i, n := range rejectionNames {
		t.Totals.Rejected[n] = s.Rejected.Of(rejections[i])
		if rejections[i] != executor.RejectedClosed {
			t.Totals.Shadowed[n] = s.Shadowed.Of(rejections[i])
		}
	}
	t.Totals.RejectedByPriority = make(map[string]uint64, priority.Levels)
	for p, n := range s.RejectedByPriority {
		t.Totals.RejectedByPriority[priority.Priority(p).String()] = n
	}
	if s.Breaker.State == breaker.Open {
		at := s.Breaker.OpenUntil
		in := at.Sub(now).Milliseconds()
		t.ProbeAt, t.ProbeInMS = &at, &in
	}
	return t
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
