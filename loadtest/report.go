package loadtest

import (
	"slices"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// ExhaustionReport is the result of RunExhaustion: one ModeReport per mode,
// all on identical traffic.
type ExhaustionReport struct {
	Config      map[string]any `json:"config"` // the scenario, durations as text
	WallSeconds float64        `json:"wall_s"` // how long the runs took
	Modes       []ModeReport   `json:"modes"`  // in the order they ran
	cfg         ExhaustionConfig
}

// ModeReport is one mode's run: its summary, its timeline and its breaker's
// transitions. Times are scenario seconds since the start of the run unless
// a name says otherwise.
type ModeReport struct {
	Summary     Summary      `json:"summary"`
	Seconds     []Second     `json:"seconds"`
	Transitions []Transition `json:"transitions"`
}

// Summary condenses one mode's run into the numbers that tell the story.
// Optional times are nil when the thing never happened (or, for the breaker
// fields, when the mode has no breaker).
type Summary struct {
	Mode       Mode `json:"mode"`
	HasBreaker bool `json:"has_breaker"`
	// ExhaustedAfter is the time from the outage start to the first request
	// that found every shop worker busy.
	ExhaustedAfter *float64 `json:"exhausted_after_s"`
	// OpenedAfter is the time from the outage start to the breaker's first
	// opening.
	OpenedAfter *float64 `json:"opened_after_s"`
	// OpenedBy is the reason of that opening: consecutive-failures when the
	// breaker had to wait for timeouts, saturation when the bulkhead was full.
	OpenedBy string `json:"opened_by,omitempty"`
	// ClosedAfterHeal is the time from the end of the outage to the breaker's
	// first close after it (0 if it was closed then); nil if the breaker
	// never opened, or was still open when the run ended (StillOpenAtEnd).
	ClosedAfterHeal *float64 `json:"closed_after_heal_s"`
	StillOpenAtEnd  bool     `json:"still_open_at_end"`
	// CatalogAvailabilityOutage is served / offered for the catalog requests
	// that arrived during the outage.
	CatalogAvailabilityOutage float64 `json:"catalog_availability_outage"`
	CatalogOfferedOutage      int     `json:"catalog_offered_outage"`
	CatalogServedOutage       int     `json:"catalog_served_outage"`
	// CatalogAvailability is served / offered over the whole run.
	CatalogAvailability float64 `json:"catalog_availability"`
	// CatalogBadSeconds counts the seconds in which fewer than 99 % of the
	// catalog requests were served.
	CatalogBadSeconds int `json:"catalog_bad_seconds"`
	MaxBusy           int `json:"max_busy_workers"`
	// Cycles counts the breaker's closed → open transitions; Opens every
	// transition into open (a failed probe re-opens); FailedProbes those.
	Cycles       int `json:"cycles"`
	Opens        int `json:"opens"`
	FailedProbes int `json:"failed_probes"`
	// ClosedBetweenTrips is the mean length of the closed periods that
	// ended in a trip; nil without any.
	ClosedBetweenTrips *float64 `json:"closed_between_trips_s"`
	// Payments counts the payment requests by outcome.
	Payments PaymentCounts `json:"payments"`
	// Refusals are the executor's refusals by reason at the end of the
	// run (fusebox), or those it would have made (shadow: nothing was
	// refused); nil in the modes without an executor.
	Refusals *executor.Rejections `json:"refusals,omitempty"`
	// Skipped counts the requests (both kinds) not sent because the machine
	// stalled the load generator for more than 250 ms of scenario time (always
	// 0 in virtual time): sending them late, all at once, would have been a
	// burst the scenario does not have.
	Skipped int `json:"skipped"`
}

// PaymentCounts counts payment requests by how they ended.
type PaymentCounts struct {
	Offered    int `json:"offered"`
	Refused    int `json:"refused"` // no free shop worker
	OK         int `json:"ok"`
	Declined   int `json:"declined"` // business refusals
	TimedOut   int `json:"timed_out"`
	FailedFast int `json:"failed_fast"` // breaker open, or bulkhead full of stuck calls
	Busy       int `json:"busy"`        // bulkhead full of young calls: refused alone, breaker untouched
	Errors     int `json:"errors"`
	CutOff     int `json:"cut_off"` // still running when the run ended
}

// Second is one second of scenario time.
type Second struct {
	T              int     `json:"t"`            // the second's start
	BusyWorkers    int     `json:"busy_workers"` // most shop workers busy at once
	CatalogOffered int     `json:"catalog_offered"`
	CatalogServed  int     `json:"catalog_served"`
	CatalogRefused int     `json:"catalog_refused"`
	CatalogP50Ms   float64 `json:"catalog_p50_ms"` // latency of the served ones; 0 if none
	CatalogP99Ms   float64 `json:"catalog_p99_ms"`
	// Payments: offered by arrival second, outcomes by the second they were
	// known (a timeout shows when it fires).
	PaymentsOffered    int    `json:"payments_offered"`
	PaymentsRefused    int    `json:"payments_refused"`
	PaymentsOK         int    `json:"payments_ok"`
	PaymentsDeclined   int    `json:"payments_declined"`
	PaymentsTimedOut   int    `json:"payments_timed_out"`
	PaymentsFailedFast int    `json:"payments_failed_fast"`
	PaymentsBusy       int    `json:"payments_busy"`
	PaymentsErrors     int    `json:"payments_errors"`
	Breaker            string `json:"breaker,omitempty"` // state at the second's end
}

// CatalogSuccess is the share of this second's catalog requests that were
// served, or 1 if none arrived.
func (s Second) CatalogSuccess() float64 {
	if s.CatalogOffered == 0 {
		return 1
	}
	return float64(s.CatalogServed) / float64(s.CatalogOffered)
}

// Transition is one breaker transition.
type Transition struct {
	At     float64 `json:"at_s"`
	From   string  `json:"from"`
	To     string  `json:"to"`
	Reason string  `json:"reason"`
}

// summarize builds a mode's report from its recorder.
func summarize(mode Mode, hasBreaker bool, r *recorder) ModeReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	states := stateTimeline(r.transitions, len(r.secs))
	mr := ModeReport{Seconds: make([]Second, len(r.secs)), Transitions: exportTransitions(r.transitions)}
	s := Summary{Mode: mode, HasBreaker: hasBreaker}
	var served, offered int
	for i, a := range r.secs {
		sec := Second{
			T: i, BusyWorkers: a.busyMax,
			CatalogOffered: decided(a.catalog), CatalogServed: a.catalog[outServed], CatalogRefused: a.catalog[outRefused],
			CatalogP50Ms: ms(percentile(a.catalogLatencies, 50)), CatalogP99Ms: ms(percentile(a.catalogLatencies, 99)),
			PaymentsOffered: a.paymentsOffered, PaymentsRefused: a.payments[outRefused],
			PaymentsOK: a.payments[outPaid], PaymentsDeclined: a.payments[outDeclined],
			PaymentsTimedOut: a.payments[outTimedOut], PaymentsFailedFast: a.payments[outFailedFast],
			PaymentsBusy:   a.payments[outBusy],
			PaymentsErrors: a.payments[outError],
		}
		if hasBreaker {
			sec.Breaker = states[i].end.String()
		}
		mr.Seconds[i] = sec
		served, offered = served+sec.CatalogServed, offered+sec.CatalogOffered
		if sec.CatalogSuccess() < 0.99 {
			s.CatalogBadSeconds++
		}
		s.MaxBusy = max(s.MaxBusy, a.busyMax)
		p := &s.Payments
		p.Offered += sec.PaymentsOffered
		p.Refused += sec.PaymentsRefused
		p.OK += sec.PaymentsOK
		p.Declined += sec.PaymentsDeclined
		p.TimedOut += sec.PaymentsTimedOut
		p.FailedFast += sec.PaymentsFailedFast
		p.Busy += sec.PaymentsBusy
		p.Errors += sec.PaymentsErrors
	}
	s.Payments.CutOff = r.cutOff[kindPayment]
	s.Skipped = r.skipped[kindCatalog] + r.skipped[kindPayment]
	s.CatalogAvailability = share(served, offered)
	s.CatalogOfferedOutage, s.CatalogServedOutage = r.outageOffered, r.outageServed
	s.CatalogAvailabilityOutage = share(r.outageServed, r.outageOffered)
	s.ExhaustedAfter = secsPtr(r.firstRefusal-r.outageStart, r.refusedInRun)
	if hasBreaker {
		summarizeBreaker(&s, r.transitions, r.outageStart, r.outageEnd, r.duration)
	}
	mr.Summary = s
	return mr
}

// summarizeBreaker fills in the breaker's part of a summary.
func summarizeBreaker(s *Summary, ts []transition, outageStart, outageEnd, duration time.Duration) {
	opened := false
	closedSince, closedSum := time.Duration(0), time.Duration(0)
	for _, t := range ts {
		if t.to == breaker.Closed {
			closedSince = t.at
		}
		if t.to != breaker.Open {
			continue
		}
		s.Opens++
		if t.from == breaker.Closed {
			s.Cycles++
			closedSum += t.at - closedSince
		}
		if t.reason == breaker.ProbeFailed {
			s.FailedProbes++
		}
		if !opened && t.at >= outageStart {
			opened = true
			s.OpenedAfter, s.OpenedBy = secsPtr(t.at-outageStart, true), t.reason.String()
		}
	}
	if s.Cycles > 0 {
		s.ClosedBetweenTrips = secsPtr(closedSum/time.Duration(s.Cycles), true)
	}
	if s.Opens == 0 || outageEnd >= duration {
		return
	}
	if stateAt(ts, outageEnd) == breaker.Closed {
		s.ClosedAfterHeal = secsPtr(0, true)
		return
	}
	for _, t := range ts {
		if t.at >= outageEnd && t.to == breaker.Closed {
			s.ClosedAfterHeal = secsPtr(t.at-outageEnd, true)
			return
		}
	}
	s.StillOpenAtEnd = true
}

// stateAt is the state after every transition before t (closed before the
// first).
func stateAt(ts []transition, t time.Duration) breaker.State {
	st := breaker.Closed
	for _, x := range ts {
		if x.at >= t {
			break
		}
		st = x.to
	}
	return st
}

// stateSecond is the breaker during one second.
type stateSecond struct {
	end       breaker.State // at the second's end
	openShare float64       // share of the second spent refusing calls (open or half-open)
}

// stateTimeline replays transitions (in time order) over n seconds.
func stateTimeline(ts []transition, n int) []stateSecond {
	out := make([]stateSecond, n)
	st, since, j := breaker.Closed, time.Duration(0), 0
	for i := range out {
		end := time.Duration(i+1) * time.Second
		var open time.Duration
		for ; j < len(ts) && ts[j].at < end; j++ {
			if refusing(st) {
				open += ts[j].at - max(since, end-time.Second)
			}
			st, since = ts[j].to, ts[j].at
		}
		if refusing(st) {
			open += end - max(since, end-time.Second)
		}
		out[i] = stateSecond{end: st, openShare: float64(open) / float64(time.Second)}
	}
	return out
}

// refusing reports whether a breaker in st turns (most) calls away.
func refusing(st breaker.State) bool {
	return st == breaker.Open || st == breaker.HalfOpen || st == breaker.ForcedOpen
}

func exportTransitions(ts []transition) []Transition {
	out := make([]Transition, len(ts))
	for i, t := range ts {
		out[i] = Transition{At: secs(t.at), From: t.from.String(), To: t.to.String(), Reason: t.reason.String()}
	}
	return out
}

// percentile returns the nearest-rank q-th percentile (0 < q ≤ 100) of ds:
// the smallest value with at least q % of ds at or below it; 0 for none. It
// sorts ds.
func percentile(ds []time.Duration, q int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	rank := (q*len(ds) + 99) / 100 // ceil(q·n/100), counted from 1
	return ds[min(max(rank, 1), len(ds))-1]
}

// share is n/d, or 0 when d is 0.
func share(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
