package loadtest

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// BurstReport is the result of RunBurst: the same traffic under the
// default stuck criterion and under the literal rule.
type BurstReport struct {
	Config      map[string]any `json:"config"`
	WallSeconds float64        `json:"wall_s"`
	Runs        []BurstRun     `json:"runs"`
	cfg         BurstConfig
}

// BurstRun is one run. Times are scenario seconds since its start.
type BurstRun struct {
	Name        string       `json:"name"`
	Summary     BurstSummary `json:"summary"`
	Transitions []Transition `json:"transitions"`
}

// BurstSummary condenses one run.
type BurstSummary struct {
	// Openings counts closed → open transitions: on a supplier that never
	// fails, every one is a false trip.
	Openings int `json:"openings"`
	// FirstOpening is when the breaker first opened; nil if never.
	FirstOpening *float64 `json:"first_opening_s"`
	// OpenShare is the share of the run the breaker spent refusing calls.
	OpenShare float64 `json:"open_share"`

	Calls    int `json:"calls"`     // calls made
	OK       int `json:"ok"`        // answered
	Busy     int `json:"busy"`      // refused alone: the bulkhead was full of young calls
	Stuck    int `json:"stuck"`     // refused by a full bulkhead judged stuck: each tripped the breaker
	Open     int `json:"open"`      // refused by the open breaker
	TimedOut int `json:"timed_out"` // outlived the invocation timeout
	Errors   int `json:"errors"`    // anything else (a transport error)
	CutOff   int `json:"cut_off"`   // still running when the run ended
	Skipped  int `json:"skipped"`   // not sent: the machine stalled the load generator (0 in virtual time)

	// The executor's view at the end of the run: the median and p99 of
	// recent successful calls, and the age from which a full bulkhead
	// counted as stuck (clamp(5 × p99, 0.5 s, timeout/2) by default).
	LatencyP50 float64 `json:"latency_p50_s"`
	LatencyP99 float64 `json:"latency_p99_s"`
	StuckAfter float64 `json:"stuck_after_s"`

	Stalls       int     `json:"stalls"`
	LongestStall float64 `json:"longest_stall_s"`
}

// burstRecorder collects one run's outcomes. Safe for concurrent use.
type burstRecorder struct {
	clk         clock
	mu          sync.Mutex
	s           BurstSummary
	transitions []transition
}

func (r *burstRecorder) transition(ev breaker.Event) {
	r.mu.Lock()
	r.transitions = append(r.transitions, transition{at: r.clk.at(ev.Time), from: ev.From, to: ev.To, reason: ev.Reason})
	r.mu.Unlock()
}

func (r *burstRecorder) skip() {
	r.mu.Lock()
	r.s.Skipped++
	r.mu.Unlock()
}

// outcome records how one call ended; cut says the run was over.
func (r *burstRecorder) outcome(err error, cut bool) {
	var rej *executor.RejectedError
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s.Calls++
	switch {
	case err == nil:
		r.s.OK++
	case cut:
		r.s.CutOff++
	case errors.As(err, &rej) && rej.Reason == executor.RejectedBusy:
		r.s.Busy++
	case errors.As(err, &rej) && rej.Reason == executor.RejectedSaturated:
		r.s.Stuck++
	case errors.Is(err, breaker.ErrOpen):
		r.s.Open++
	case errors.Is(err, executor.ErrTimeout):
		r.s.TimedOut++
	default:
		r.s.Errors++
	}
}

// summarize finishes the run's summary; st is the executor's last Stats.
func (r *burstRecorder) summarize(name string, cfg BurstConfig, clk clock, st executor.Stats, stalls []stall) BurstRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.s
	var open time.Duration
	for _, sec := range stateTimeline(r.transitions, int(cfg.Duration/time.Second)) {
		open += time.Duration(sec.openShare * float64(time.Second))
	}
	s.OpenShare = float64(open) / float64(cfg.Duration)
	for _, t := range r.transitions {
		if t.from == breaker.Closed && t.to == breaker.Open {
			s.Openings++
			if s.FirstOpening == nil {
				s.FirstOpening = secsPtr(t.at, true)
			}
		}
	}
	s.LatencyP50, s.LatencyP99 = secs(clk.scenario(st.LatencyP50)), secs(clk.scenario(st.LatencyP99))
	s.StuckAfter = secs(stuckAfter(cfg, clk.scenario(st.LatencyP99)))
	s.Stalls = len(stalls)
	for _, x := range stalls {
		s.LongestStall = max(s.LongestStall, secs(x.to-x.from))
	}
	return BurstRun{Name: name, Summary: s, Transitions: exportTransitions(r.transitions)}
}

// stuckAfter is the first run's threshold for a supplier whose p99 is p99
// (0: no history), in scenario time, as executor.StuckConfig computes it.
func stuckAfter(cfg BurstConfig, p99 time.Duration) time.Duration {
	s := cfg.Stuck
	ceiling := cmp.Or(s.MaxAge, cfg.InvocationTimeout/2)
	if p99 == 0 {
		return ceiling
	}
	floor := cmp.Or(s.MinAge, min(stuckMinAge, ceiling))
	return min(max(time.Duration(cmp.Or(s.Multiple, stuckMultiple)*float64(p99)), floor), ceiling)
}

// WriteJSON writes the whole report as indented JSON.
func (r *BurstReport) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// WriteTable writes both runs side by side.
func (r *BurstReport) WriteTable(w io.Writer) error {
	c := r.cfg
	fmt.Fprintf(w, "Healthy but bursty: %d slots; Poisson arrivals at %g/s from the first instant (cold start);\n", c.Slots, c.Rate)
	fmt.Fprintf(w, "latency lognormal, median %s, σ %g; a stall of %s–%s every %s; %s timeout; %s run, seed %d.\n",
		dsecs(c.LatencyMedian), c.LatencySigma, dsecs(c.StallMin), dsecs(c.StallMax), dsecs(c.StallEvery),
		dsecs(c.InvocationTimeout), dsecs(c.Duration), c.Seed)
	fmt.Fprintf(w, "Transport %s, speed %g; all times are scenario time. The supplier never fails: every trip is false.\n\n", c.Transport, c.Speed)
	t := &table{label: 40}
	for _, run := range r.Runs {
		t.cols = append(t.cols, run.Name)
	}
	row := func(label string, cell func(BurstSummary) string) {
		var cells []string
		for _, run := range r.Runs {
			cells = append(cells, cell(run.Summary))
		}
		t.add(label, cells...)
	}
	row("breaker openings (false trips)", func(s BurstSummary) string { return fmt.Sprint(s.Openings) })
	row("first opening", func(s BurstSummary) string { return optSecs(s.FirstOpening, "never") })
	row("time open", func(s BurstSummary) string { return pct(s.OpenShare) })
	row("calls made / answered", func(s BurstSummary) string { return fmt.Sprintf("%d / %d", s.Calls, s.OK) })
	row("refused busy (breaker untouched)", func(s BurstSummary) string { return fmt.Sprint(s.Busy) })
	row("refused stuck (tripped) / open", func(s BurstSummary) string { return fmt.Sprintf("%d / %d", s.Stuck, s.Open) })
	row("timed out", func(s BurstSummary) string { return fmt.Sprint(s.TimedOut) })
	row("latency p50 / p99 (executor)", func(s BurstSummary) string {
		return fsecs(s.LatencyP50) + " / " + fsecs(s.LatencyP99)
	})
	row("stuck after (the stuck criterion)", func(s BurstSummary) string { return fsecs(s.StuckAfter) })
	row("stalls (longest)", func(s BurstSummary) string { return fmt.Sprintf("%d (%s)", s.Stalls, fsecs(s.LongestStall)) })
	if r.Runs[0].Summary.Skipped+r.Runs[len(r.Runs)-1].Summary.Skipped > 0 {
		row("calls skipped (the machine stalled)", func(s BurstSummary) string { return fmt.Sprint(s.Skipped) })
	}
	if r.Runs[0].Summary.Errors+r.Runs[len(r.Runs)-1].Summary.Errors > 0 {
		row("transport errors", func(s BurstSummary) string { return fmt.Sprint(s.Errors) })
	}
	return t.write(w)
}
