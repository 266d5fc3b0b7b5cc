package loadtest

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bestStatic is the best fixed Workers of each of A–E found by make
// sweep-adaptive (Workers 1…256; docs/adaptive.md has the table).
var bestStatic = map[string]int{
	"A steady 70 %":               48,
	"B 2× overload":               64,
	"C capacity 32 → 8 → 32":      28,
	"D latency ×4, same capacity": 160,
	"E 10× bursts 2 s every 30 s": 80,
}

// TestAdaptiveGoodput: in each of A–E the adaptive limit's goodput is at
// least 95 % of the best static size's, within 2 s of a cold start it
// serves at least 90 % of what that size does, its breaker never opens, in A the
// limit is stable, and in C it follows the capacity step. Under the race
// detector the runs are shorter (raceDurations): the same comparison.
func TestAdaptiveGoodput(t *testing.T) {
	for _, s := range CapacityScenarios()[:5] {
		if raceEnabled {
			s.Duration = raceDurations[s.Name[0]]
		}
		t.Run(s.Name, func(t *testing.T) {
			size, ok := bestStatic[s.Name]
			require.True(t, ok)
			t.Parallel()
			adaptive := runCapacity(t, s, Sizing{Slots: 20, Adaptive: true})
			best := runCapacity(t, s, Sizing{Slots: size})
			t.Logf("adaptive %.0f/s, best static (%d) %.0f/s", adaptive.Goodput, size, best.Goodput)
			assert.GreaterOrEqual(t, adaptive.Goodput, 0.95*best.Goodput, "got %.0f/s, want ≥ 95 %% of %.0f/s", adaptive.Goodput, best.Goodput)
			assert.Zero(t, adaptive.Opens, "a healthy supplier's breaker never opens")
			// From the cold start at 20, the second second (1–2 s) already
			// serves 90 % of what the best size serves then.
			t.Logf("first seconds: adaptive %v, best static %v", adaptive.PerSecond[:3], best.PerSecond[:3])
			assert.GreaterOrEqual(t, float64(adaptive.PerSecond[1]), 0.9*float64(best.PerSecond[1]),
				"goodput from 1 s to 2 s after a cold start: %d, want ≥ 90 %% of the best size's %d", adaptive.PerSecond[1], best.PerSecond[1])
			switch s.Name[0] {
			case 'A':
				cv := variation(adaptive.Limits[20:]) // from 2 s on
				t.Logf("limit in A: coefficient of variation %.3f", cv)
				assert.LessOrEqual(t, cv, 0.10)
			case 'B':
				// The best fixed size serves all the supplier can: what
				// any sizing can gain in B over another is bounded by
				// what that one leaves of the capacity.
				c := s.Capacity()
				t.Logf("B: the supplier's capacity %.0f/s; best static %.1f %% of it, adaptive %.1f %%", c, 100*best.Goodput/c, 100*adaptive.Goodput/c)
				f := best.Goodput / c
				assert.True(t, f >= 0.97 && f <= 1.005, "best static %.0f/s, capacity %.0f/s", best.Goodput, c)
			case 'C':
				followsStep(t, adaptive)
			}
		})
	}
}

// raceDurations are the scenarios' lengths under the race detector, which
// makes a run some ten times dearer: A and B 10 s (of 30), E 35 s
// (one burst); C and D in full (the step, the convergence check and D's
// slow start need it).
var raceDurations = map[byte]time.Duration{'A': 10 * time.Second, 'B': 10 * time.Second,
	'C': 30 * time.Second, 'D': 30 * time.Second, 'E': 35 * time.Second}

// variation is the coefficient of variation of xs.
func variation(xs []int) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += float64(x)
	}
	mean := sum / float64(len(xs))
	for _, x := range xs {
		sq += (float64(x) - mean) * (float64(x) - mean)
	}
	return math.Sqrt(sq/float64(len(xs))) / mean
}

// followsStep checks C's run: 5 s after the supplier's capacity falls
// from 32 servers to 8 (at 10 s), the limit stays within ±25 % of the
// sizes that serve 8 servers best, until the capacity comes back at 20 s.
func followsStep(t *testing.T, run CapacityRun) {
	t.Helper()
	lo, hi := rightSize8[0], rightSize8[1]
	for i, l := range run.Limits[150:199] { // 15.0 s to 19.9 s
		assert.True(t, float64(l) >= 0.75*float64(lo) && float64(l) <= 1.25*float64(hi),
			"at %v: limit %d, want within ±25 %% of [%d, %d]", time.Duration(150+i)*capSample, l, lo, hi)
	}
	t.Logf("limits 10–20 s: %v", run.Limits[100:200])
}

// TestAdaptiveHangTrips: in F the adaptive limit trips the breaker no later
// than a static bulkhead of the limit's size at the onset, and sends no
// more calls into the hung supplier than that limit.
func TestAdaptiveHangTrips(t *testing.T) {
	t.Parallel()
	f := CapacityScenarios()[5]
	adaptive := runCapacity(t, f, Sizing{Slots: 20, Adaptive: true})
	require.NotZero(t, adaptive.FirstOpen, "the hang trips the breaker")
	static := runCapacity(t, f, Sizing{Slots: adaptive.LimitAtHang})
	require.NotZero(t, static.FirstOpen)
	t.Logf("limit at the onset %d; trip %v after the onset (static %d: %v); calls into the hang %d (static %d)",
		adaptive.LimitAtHang, adaptive.FirstOpen-f.HangAt, adaptive.LimitAtHang, static.FirstOpen-f.HangAt,
		adaptive.HungCalls, static.HungCalls)
	assert.LessOrEqual(t, adaptive.FirstOpen, static.FirstOpen, "no later than the static bulkhead")
	assert.LessOrEqual(t, adaptive.FirstOpen-f.HangAt, 1500*time.Millisecond, "in about a second")
	assert.LessOrEqual(t, adaptive.HungCalls, adaptive.LimitAtHang, "at most the limit's calls go into the hang")
}

// TestAdaptiveOverloadDoesNotDrift: in a sustained 2× overload (B for 90
// s) the limit does not creep up with a baseline learned from queued
// windows only: the last 30 s serve as well as seconds 5–30, and the limit
// ends within 2× the best static size. (Without the periodic probe the
// limit reached 139 at 51 s and goodput fell to 0.)
func TestAdaptiveOverloadDoesNotDrift(t *testing.T) {
	t.Parallel()
	b := CapacityScenarios()[1]
	b.Duration = 90 * time.Second
	run := runCapacity(t, b, Sizing{Slots: 20, Adaptive: true})
	mean := func(from, to int) float64 {
		sum := 0
		for _, n := range run.PerSecond[from:to] {
			sum += n
		}
		return float64(sum) / float64(to-from)
	}
	early, late := mean(5, 30), mean(60, 90)
	end := run.Limits[len(run.Limits)-1]
	t.Logf("goodput 5–30 s %.0f/s, 60–90 s %.0f/s; limit at the end %d; reasons %v", early, late, end, run.Reasons)
	assert.GreaterOrEqual(t, late, 0.9*early, "the last 30 s serve as well as the first")
	assert.LessOrEqual(t, end, 2*bestStatic[b.Name], "the limit does not drift up")
}
