package loadtest

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

const s = time.Second

func ptr(v float64) *float64 { return &v }

func TestPercentile(t *testing.T) {
	var hundred []time.Duration
	for i := 100; i >= 1; i-- {
		hundred = append(hundred, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		name string
		ds   []time.Duration
		q    int
		want time.Duration
	}{
		{"none is zero", nil, 50, 0},
		{"one value is every percentile", []time.Duration{7}, 99, 7},
		{"median of two is the lower (nearest rank)", []time.Duration{20, 10}, 50, 10},
		{"p99 of two is the higher", []time.Duration{20, 10}, 99, 20},
		{"p50 of 1..100 ms", hundred, 50, 50 * time.Millisecond},
		{"p99 of 1..100 ms", hundred, 99, 99 * time.Millisecond},
		{"p100 is the maximum", hundred, 100, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, percentile(append([]time.Duration(nil), tc.ds...), tc.q))
		})
	}
}

func TestDeclinesExactShare(t *testing.T) {
	for _, rate := range []float64{0, 0.05, 1.0 / 3, 0.5, 1} {
		n := 0
		for i := int64(1); i <= 600; i++ {
			if declinesEvenly(i, rate) {
				n++
			}
		}
		assert.Equal(t, int(600*rate+1e-9), n, "rate %v", rate)
	}
	assert.True(t, declinesEvenly(20, 0.05), "the 20th call of one in twenty")
	assert.False(t, declinesEvenly(19, 0.05))
}

func tr(at time.Duration, from, to breaker.State, r breaker.Reason) transition {
	return transition{at: at, from: from, to: to, reason: r}
}

func TestStateTimeline(t *testing.T) {
	ts := []transition{
		tr(1500*time.Millisecond, breaker.Closed, breaker.Open, breaker.Saturation),
		tr(3250*time.Millisecond, breaker.Open, breaker.HalfOpen, breaker.ResetTimeout),
		tr(3500*time.Millisecond, breaker.HalfOpen, breaker.Closed, breaker.ProbesSucceeded),
		// Two short open periods within one second: 0.2 s + 0.4 s.
		tr(5200*time.Millisecond, breaker.Closed, breaker.Open, breaker.QueueFull),
		tr(5400*time.Millisecond, breaker.Open, breaker.Closed, breaker.QueueDrained),
		tr(5500*time.Millisecond, breaker.Closed, breaker.Open, breaker.QueueFull),
		tr(5900*time.Millisecond, breaker.Open, breaker.Closed, breaker.QueueDrained),
	}
	got := stateTimeline(ts, 7)
	want := []stateSecond{
		{breaker.Closed, 0}, {breaker.Open, 0.5}, {breaker.Open, 1}, {breaker.Closed, 0.5},
		{breaker.Closed, 0}, {breaker.Closed, 0.6}, {breaker.Closed, 0},
	}
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].end, got[i].end, "second %d", i)
		assert.InDelta(t, want[i].openShare, got[i].openShare, 1e-9, "second %d", i)
	}
	assert.InDelta(t, (2+0.6)/6.0, refusingShare(ts, 1*s, 7*s), 1e-9, "open 1.5–3.5 s and 0.6 s, over 6 s")
	assert.Equal(t, breaker.Open, stateAt(ts, 2*s))
	assert.Equal(t, breaker.Closed, stateAt(ts, 1500*time.Millisecond), "a transition at t counts after t")
}

func TestSummarizeBreaker(t *testing.T) {
	trip := func(at time.Duration) transition { return tr(at, breaker.Closed, breaker.Open, breaker.Saturation) }
	half := func(at time.Duration) transition { return tr(at, breaker.Open, breaker.HalfOpen, breaker.ResetTimeout) }
	failed := func(at time.Duration) transition { return tr(at, breaker.HalfOpen, breaker.Open, breaker.ProbeFailed) }
	closed := func(at time.Duration) transition {
		return tr(at, breaker.HalfOpen, breaker.Closed, breaker.ProbesSucceeded)
	}
	const start, end, duration = 30 * s, 120 * s, 180 * s
	for _, tc := range []struct {
		name      string
		ts        []transition
		want      Summary
		outageEnd time.Duration
	}{
		{"never opened", nil, Summary{}, end},
		{"opened, failed a probe, closed after the heal",
			[]transition{trip(31 * s), half(66 * s), failed(96 * s), half(131 * s), closed(131100 * time.Millisecond)},
			Summary{OpenedAfter: ptr(1), ClosedAfterHeal: ptr(11.1), Cycles: 1, Opens: 2, FailedProbes: 1}, end},
		{"a trip before the outage is not the outage's opening",
			[]transition{trip(10 * s), half(45 * s), closed(46 * s), trip(32 * s)},
			Summary{OpenedAfter: ptr(2), StillOpenAtEnd: true, Cycles: 2, Opens: 2}, end},
		{"closed already when the supplier heals",
			[]transition{trip(31 * s), half(66 * s), closed(67 * s)},
			Summary{OpenedAfter: ptr(1), ClosedAfterHeal: ptr(0), Cycles: 1, Opens: 1}, 100 * s},
		{"the outage outlasts the run: nothing to say about healing",
			[]transition{trip(31 * s)},
			Summary{OpenedAfter: ptr(1), Cycles: 1, Opens: 1}, duration},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got Summary
			summarizeBreaker(&got, tc.ts, start, tc.outageEnd, duration)
			assert.Equal(t, tc.want.Cycles, got.Cycles)
			assert.Equal(t, tc.want.Opens, got.Opens)
			assert.Equal(t, tc.want.FailedProbes, got.FailedProbes)
			assert.Equal(t, tc.want.StillOpenAtEnd, got.StillOpenAtEnd)
			assertOptSecs(t, tc.want.OpenedAfter, got.OpenedAfter, "opened after")
			assertOptSecs(t, tc.want.ClosedAfterHeal, got.ClosedAfterHeal, "closed after heal")
		})
	}
}

func assertOptSecs(t *testing.T, want, got *float64, what string) {
	t.Helper()
	if want == nil {
		assert.Nil(t, got, what)
		return
	}
	require.NotNil(t, got, what)
	assert.InDelta(t, *want, *got, 1e-9, what)
}

// The per-second and summary arithmetic on a hand-made run of 3 s with the
// supplier hung from 1 s to 2 s.
func TestSummarize(t *testing.T) {
	rec := newRecorder(clock{speed: 1}, 3*s, 1*s, 2*s)
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	cat := func(at int, o outcome) { rec.request(kindCatalog, ms(at), ms(at+10), o) }
	for _, at := range []int{100, 300, 500, 700} {
		cat(at, outServed)
	}
	rec.refused(ms(800)) // before the outage: not its exhaustion
	cat(800, outRefused)
	for _, at := range []int{1100, 1300, 1500} {
		cat(at, outServed)
	}
	rec.refused(ms(1700))
	cat(1700, outRefused)
	cat(2100, outServed)
	cat(2995, outCancelled) // cut off by the end of the run
	rec.request(kindPayment, ms(500), ms(2500), outTimedOut)
	rec.request(kindPayment, ms(1200), ms(1200), outFailedFast)
	rec.request(kindPayment, ms(2900), ms(3000), outPaid) // ends with the run: cut off
	rec.busy(ms(1200), 7)
	rec.busy(ms(1300), 5)
	rec.transition(breaker.Event{From: breaker.Closed, To: breaker.Open, Reason: breaker.Saturation,
		Time: rec.clk.start.Add(ms(1200))})

	m := summarize(ModeFusebox, true, rec)
	sum := m.Summary
	assertOptSecs(t, ptr(0.7), sum.ExhaustedAfter, "first refusal in the outage, 0.7 s after its start")
	assertOptSecs(t, ptr(0.2), sum.OpenedAfter, "opened")
	assert.Equal(t, "saturation", sum.OpenedBy)
	assert.Equal(t, 4, sum.CatalogOfferedOutage)
	assert.Equal(t, 3, sum.CatalogServedOutage)
	assert.InDelta(t, 0.75, sum.CatalogAvailabilityOutage, 1e-9)
	assert.InDelta(t, 8.0/10, sum.CatalogAvailability, 1e-9, "the cut-off request counts for nothing")
	assert.Equal(t, 2, sum.CatalogBadSeconds, "second 0 (4/5) and second 1 (3/4)")
	assert.Equal(t, 7, sum.MaxBusy)
	assert.Equal(t, PaymentCounts{Offered: 3, TimedOut: 1, FailedFast: 1, CutOff: 1}, sum.Payments)

	require.Len(t, m.Seconds, 3)
	assert.Equal(t, Second{T: 1, BusyWorkers: 7, CatalogOffered: 4, CatalogServed: 3, CatalogRefused: 1,
		CatalogP50Ms: 10, CatalogP99Ms: 10, PaymentsOffered: 1, PaymentsFailedFast: 1, Breaker: "open"}, m.Seconds[1])
	assert.Equal(t, 1, m.Seconds[2].PaymentsTimedOut, "a timeout counts in the second it fired")
	assert.Equal(t, 1, m.Seconds[2].PaymentsOffered, "the cut-off payment was offered")
	assert.Equal(t, []Transition{{At: 1.2, From: "closed", To: "open", Reason: "saturation"}}, m.Transitions)
}

func TestCycles(t *testing.T) {
	ts := []transition{
		tr(10*s, breaker.Closed, breaker.Open, breaker.QueueFull),
		tr(20*s, breaker.Open, breaker.Closed, breaker.QueueDrained),
		tr(50*s, breaker.Closed, breaker.Open, breaker.QueueFull),
		tr(60*s, breaker.Open, breaker.HalfOpen, breaker.ResetTimeout),
		tr(61*s, breaker.HalfOpen, breaker.Open, breaker.ProbeFailed),
		tr(70*s, breaker.Open, breaker.HalfOpen, breaker.ResetTimeout),
		tr(71*s, breaker.HalfOpen, breaker.Closed, breaker.ProbesSucceeded),
		tr(90*s, breaker.Closed, breaker.Open, breaker.QueueFull),
	}
	got := cycles(ts)
	require.Len(t, got, 3)
	assert.Equal(t, Cycle{OpenedAt: 10, Reason: "queue-full", OpenFor: ptr(10), ClosedBy: "queue-drained", ClosedFor: ptr(30)}, got[0])
	assert.Equal(t, Cycle{OpenedAt: 50, Reason: "queue-full", OpenFor: ptr(21), ClosedBy: "probes-succeeded", ClosedFor: ptr(19)}, got[1])
	assert.Equal(t, Cycle{OpenedAt: 90, Reason: "queue-full"}, got[2], "still open at the end")
	st := durationStats([]float64{10, 21})
	assert.Equal(t, DurationStats{N: 2, Mean: 15.5, Min: 10, Max: 21}, st)
	assert.Equal(t, DurationStats{}, durationStats(nil))
}

func TestReportOutput(t *testing.T) {
	cfg := DefaultExhaustion()
	rep := &ExhaustionReport{Config: cfg.settings(), cfg: cfg, Modes: []ModeReport{
		{Summary: Summary{Mode: ModeTimeout, ExhaustedAfter: ptr(9.91), CatalogAvailabilityOutage: 0.3366, MaxBusy: 100}},
		{Summary: Summary{Mode: ModeBreaker, HasBreaker: true, ExhaustedAfter: ptr(9.91), OpenedAfter: ptr(30.4),
			OpenedBy: "consecutive-failures", StillOpenAtEnd: true, Cycles: 1, Opens: 1}},
		{Summary: Summary{Mode: ModeFusebox, HasBreaker: true, OpenedAfter: ptr(1), OpenedBy: "saturation", ClosedAfterHeal: ptr(11.1),
			CatalogAvailabilityOutage: 1, Cycles: 1, Opens: 2, FailedProbes: 1}},
	}}
	var b bytes.Buffer
	require.NoError(t, rep.WriteTable(&b))
	out := b.String()
	for _, want := range []string{"timeout", "breaker", "fusebox", "9.9 s", "30.4 s", "never", "still open",
		"11.1 s", "33.7 %", "100.0 %", "1 (+1)", "—", "5 failures in a row", "bulkhead stuck"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "skipped", "no row for a problem that did not happen")

	b.Reset()
	require.NoError(t, rep.WriteJSON(&b))
	var back struct {
		Config map[string]any `json:"config"`
		Modes  []struct {
			Summary map[string]any `json:"summary"`
		} `json:"modes"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	assert.Equal(t, "30s", back.Config["invocation_timeout"])
	require.Len(t, back.Modes, 3)
	assert.Nil(t, back.Modes[2].Summary["exhausted_after_s"], "never is null")
	assert.InDelta(t, 30.4, back.Modes[1].Summary["opened_after_s"], 1e-9)
}
