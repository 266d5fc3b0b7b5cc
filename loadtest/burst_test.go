package loadtest

import (
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runBurstVirtual(t *testing.T, cfg BurstConfig) *BurstReport {
	t.Helper()
	var rep *BurstReport
	synctest.Test(t, func(t *testing.T) {
		var err error
		rep, err = RunBurst(t.Context(), cfg)
		require.NoError(t, err)
	})
	require.Len(t, rep.Runs, 2)
	return rep
}

// Scenario 2: a healthy supplier, Poisson bursts from a cold start, a
// 0.5–0.7 s stall every 30 s, 10 minutes: the default criterion never
// trips and reports its busy refusals; the literal rule trips again and
// again on the same traffic.
func TestHealthyBurstsNeverTrip(t *testing.T) {
	t.Parallel()
	small := func(c *BurstConfig) {
		// A small service's healthy upstream: 4 slots, 10 ms answers,
		// 100 calls/s, no stalls; the cold start alone fills the slots.
		c.Slots, c.Rate, c.LatencyMedian, c.LatencySigma, c.StallEvery = 4, 100, 10*time.Millisecond, 0.5, 0
	}
	for _, tc := range []struct {
		name string
		edit func(*BurstConfig)
	}{
		{"latencies spread over 10–100 ms and beyond (σ 1.15, p99 ≈ 0.5 s)", func(*BurstConfig) {}},
		{"the same with another seed", func(c *BurstConfig) { c.Seed = 2 }},
		{"tight latencies (σ 0.5, p99 ≈ 0.13 s): stalls of 4 to 5 × p99", func(c *BurstConfig) { c.LatencySigma = 0.5 }},
		{"4 slots, 10 ms answers, 100 calls/s, no stalls", small},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultBurst()
			tc.edit(&cfg)
			rep := runBurstVirtual(t, cfg)
			stuck, literal := rep.Runs[0], rep.Runs[1]
			require.Equal(t, BurstStuck, stuck.Name)
			require.Equal(t, BurstLiteral, literal.Name)
			for _, run := range rep.Runs {
				s := run.Summary
				want := cfg.Rate * cfg.Duration.Seconds()
				assert.InDelta(t, want, s.Calls, want/50, "%s: Poisson at the rate for the run", run.Name)
				assert.Equal(t, s.Calls, s.OK+s.Busy+s.Stuck+s.Open+s.TimedOut+s.Errors+s.CutOff, "%s: one outcome each", run.Name)
				assert.Zero(t, s.Errors+s.TimedOut+s.Skipped, "%s", run.Name)
				assert.Equal(t, len(cfg.stalls(rand.New(rand.NewPCG(1, 1)))), s.Stalls, "%s", run.Name)
			}
			s := stuck.Summary
			t.Logf("default: %d busy refusals, p99 %.3f s, stuck after %.2f s; literal: %d trips, open %.1f %% of the time",
				s.Busy, s.LatencyP99, s.StuckAfter, literal.Summary.Openings, 100*literal.Summary.OpenShare)
			assert.Zero(t, s.Openings, "no false trip with the defaults")
			assert.Zero(t, s.Stuck+s.Open)
			assert.Positive(t, s.Busy, "the bursts and stalls fill the bulkhead: busy refusals")
			assert.Less(t, s.Busy, s.Calls/20, "but they are rare")
			assert.Greater(t, literal.Summary.Openings, 20, "trip on any saturation: false trips")
			assert.Greater(t, literal.Summary.OpenShare, 0.5)
			require.NotNil(t, literal.Summary.FirstOpening)
			assert.Less(t, *literal.Summary.FirstOpening, 15.0, "the cold start alone trips the literal rule")
		})
	}
}

func TestBurstValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*BurstConfig)
		want string
	}{
		{"no slots", func(c *BurstConfig) { c.Slots = 0 }, "Slots"},
		{"no traffic", func(c *BurstConfig) { c.Rate = 0 }, "Rate"},
		{"a stall longer than its period", func(c *BurstConfig) { c.StallMax = time.Minute }, "stalls"},
		{"a negative spread", func(c *BurstConfig) { c.LatencySigma = -1 }, "LatencySigma"},
		{"a criterion the executor refuses", func(c *BurstConfig) { c.Stuck.Multiple = 0.5 }, "Stuck.Multiple"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultBurst()
			tc.edit(&c)
			_, err := RunBurst(t.Context(), c)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// The same scenario over loopback HTTP, compressed: about 8 s of wall
// time. Only what no stall of the machine can change is asserted.
func TestHTTPBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	cfg := DefaultBurst()
	cfg.Transport, cfg.Speed, cfg.ProgressEvery = HTTP, 10, 0
	cfg.Rate, cfg.Duration, cfg.StallEvery = 40, 40*time.Second, 10*time.Second
	rep, err := RunBurst(t.Context(), cfg)
	require.NoError(t, err)
	for _, run := range rep.Runs {
		s := run.Summary
		assert.Positive(t, s.OK, run.Name)
		assert.Zero(t, s.Errors, "%s: loopback HTTP does not fail", run.Name)
		assert.Equal(t, 4, s.Stalls, run.Name)
	}
}
