package loadtest

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

// virtualConfig is the default scenario: 30 s of healthy traffic (the
// executor learns that the supplier answers in 100 ms), then the outage.
// The supplier heals 90 s into it, inside an open period of fusebox's
// breaker (tripped 1.3 s in, probe at 36.3 s hangs until 66.3 s, open
// again until 101.3 s, all counted from the outage start).
func virtualConfig() ExhaustionConfig {
	cfg := DefaultExhaustion()
	cfg.OutageStart, cfg.OutageEnd = 30*time.Second, 120*time.Second
	return cfg
}

// warmup is when the outage starts in virtualConfig.
const warmup = 30

// runVirtual runs modes in a synctest bubble: full scale, virtual time.
func runVirtual(t *testing.T, cfg ExhaustionConfig, modes ...Mode) *ExhaustionReport {
	t.Helper()
	var rep *ExhaustionReport
	synctest.Test(t, func(t *testing.T) {
		var err error
		rep, err = RunExhaustion(t.Context(), cfg, modes...)
		require.NoError(t, err)
	})
	require.Len(t, rep.Modes, max(len(modes), len(Modes)*boolInt(len(modes) == 0)))
	return rep
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func secsOf(t *testing.T, v *float64, what string) float64 {
	t.Helper()
	require.NotNil(t, v, "%s never happened", what)
	return *v
}

func TestExhaustionScenario(t *testing.T) {
	t.Parallel()
	cfg := virtualConfig()
	rep := runVirtual(t, cfg)
	byMode := map[Mode]ModeReport{}
	for _, m := range rep.Modes {
		byMode[m.Summary.Mode] = m
	}

	t.Run("every mode gets identical traffic", func(t *testing.T) {
		for _, m := range rep.Modes {
			s := m.Summary
			assert.Equal(t, 1800, s.Payments.Offered, "%s: 10/s for 180 s", s.Mode)
			offered := 0
			for _, sec := range m.Seconds {
				offered += sec.CatalogOffered
			}
			assert.InDelta(t, 9000, offered, 1, "%s: 50/s for 180 s, less the one cut off at the end", s.Mode)
			assert.Zero(t, s.Skipped, "%s: nothing is late in virtual time", s.Mode)
			p := s.Payments
			assert.Equal(t, p.Offered, p.Refused+p.OK+p.Declined+p.TimedOut+p.FailedFast+p.Busy+p.Errors+p.CutOff,
				"%s: every payment has exactly one outcome", s.Mode)
		}
	})

	t.Run("timeout: all 100 workers busy 10 s into the outage", func(t *testing.T) {
		m := byMode[ModeTimeout]
		s := m.Summary
		// Payments at 0.0, 0.1, ..., 9.9 s each hold a worker for 30 s: the
		// 100th takes the last one at 9.9 s, the next request is refused.
		assert.InDelta(t, 10, secsOf(t, s.ExhaustedAfter, "exhaustion"), 0.1)
		assert.Equal(t, 100, s.MaxBusy)
		assert.False(t, s.HasBreaker)
		assert.Nil(t, s.OpenedAfter)
		// Rule of thumb: busy workers = arrival rate × wait time.
		assert.InDelta(t, 60, m.Seconds[warmup+5].BusyWorkers, 1, "10/s × 6 s of hanging payments (+ one catalog request)")
		for i := warmup + 11; i < warmup+30; i++ {
			assert.Zero(t, m.Seconds[i].CatalogServed, "second %d: no worker left for the catalog", i)
		}
		assert.Less(t, s.CatalogAvailabilityOutage, 0.5)
	})

	t.Run("breaker: opens at the fifth timeout, 30.4 s in", func(t *testing.T) {
		m := byMode[ModeBreaker]
		s := m.Summary
		// The calls of 0.0 ... 0.4 s time out at 30.0 ... 30.4 s.
		assert.InDelta(t, 30.4, secsOf(t, s.OpenedAfter, "opening"), 0.01)
		assert.Equal(t, "consecutive-failures", m.Transitions[0].Reason)
		assert.InDelta(t, 10, secsOf(t, s.ExhaustedAfter, "exhaustion"), 0.1, "the breaker learns too late to save the workers")
		for i := warmup + 11; i < warmup+30; i++ {
			assert.Zero(t, m.Seconds[i].CatalogServed, "second %d: catalog down until the breaker learns", i)
		}
		assert.Equal(t, "open", m.Seconds[warmup+31].Breaker)
		assert.Less(t, s.CatalogAvailabilityOutage, 0.9)
	})

	t.Run("fusebox: opens 1.3 s in, the catalog keeps its workers", func(t *testing.T) {
		m := byMode[ModeFusebox]
		s := m.Summary
		// The 11th concurrent payment (1.0 s in) finds the 10 slots full.
		// The supplier's p99 is 100 ms (100.7 ms: buckets are 25 % wide),
		// so a call is old at 8 × p99 = 0.805 s; half of the slots are
		// held by old calls once the fifth (0.4 s) is, at 1.205 s: the
		// payment of 1.3 s trips.
		assert.InDelta(t, 1.3, secsOf(t, s.OpenedAfter, "opening"), 0.01)
		assert.Equal(t, 3, s.Payments.Busy, "the payments of 1.0, 1.1 and 1.2 s were refused alone")
		assert.Equal(t, "saturation", m.Transitions[0].Reason)
		assert.Nil(t, s.ExhaustedAfter, "no request ever found the shop full")
		assert.GreaterOrEqual(t, s.CatalogAvailabilityOutage, 0.999)
		assert.Equal(t, 4500, s.CatalogOfferedOutage)
		assert.GreaterOrEqual(t, s.CatalogAvailability, 0.999)
		assert.LessOrEqual(t, s.MaxBusy, cfg.Bulkhead+2, "the stuck payments never hold more than the bulkhead")
		assert.Zero(t, s.Payments.Refused)
		assert.Equal(t, cfg.Bulkhead+s.FailedProbes, s.Payments.TimedOut, "only the bulkhead's calls and the probes hang")
	})

	t.Run("fusebox: closed within one reset timeout plus one probe after the supplier heals", func(t *testing.T) {
		s := byMode[ModeFusebox].Summary
		closed := secsOf(t, s.ClosedAfterHeal, "close")
		assert.LessOrEqual(t, closed, (cfg.ResetTimeout+cfg.SupplierLatency).Seconds()+1e-9)
		assert.InDelta(t, 11.4, closed, 0.001, "probe at 101.3 s (= 66.3 s + 35 s) succeeds after 100 ms")
		assert.Equal(t, 1, s.Cycles)
		assert.Equal(t, 1, s.FailedProbes, "the probe at 36.3 s met the hung supplier")
	})
}

// The bound on the close after healing depends on when the supplier heals: in
// an open period, the next probe closes the breaker (≤ reset timeout + one
// call); during a probe that hangs, that probe still times out first
// (≤ invocation timeout + reset timeout + one call).
func TestFuseboxRecovery(t *testing.T) {
	t.Parallel()
	cfg := DefaultExhaustion()
	for _, tc := range []struct {
		name        string
		heal        time.Duration
		wantClosed  float64
		bound       time.Duration
		wantFailed  int
		openAtHeal  bool
		wantRecover string
	}{
		{"heals while open, before the first probe", 30 * time.Second, 6.4, cfg.ResetTimeout, 0, true, "first probe at 36.3 s succeeds"},
		{"heals while open, after a failed probe", 90 * time.Second, 11.4, cfg.ResetTimeout, 1, true, "probe at 101.3 s succeeds"},
		{"heals while a probe hangs", 50 * time.Second, 51.4, cfg.InvocationTimeout + cfg.ResetTimeout, 1, false,
			"probe of 36.3 s fails at 66.3 s, the next one at 101.3 s succeeds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.OutageStart, c.OutageEnd, c.Duration = warmup*time.Second, warmup*time.Second+tc.heal, warmup*time.Second+tc.heal+70*time.Second
			s := runVirtual(t, c, ModeFusebox).Modes[0].Summary
			closed := secsOf(t, s.ClosedAfterHeal, "close")
			assert.InDelta(t, tc.wantClosed, closed, 0.001, tc.wantRecover)
			assert.LessOrEqual(t, closed, (tc.bound+c.SupplierLatency).Seconds()+1e-9)
			assert.Equal(t, tc.wantFailed, s.FailedProbes)
			assert.Equal(t, 1, s.Cycles)
		})
	}
}

func TestBusinessErrors(t *testing.T) {
	healthy := DefaultExhaustion()
	healthy.OutageStart, healthy.OutageEnd, healthy.Duration = 0, 0, 20*time.Second
	for _, tc := range []struct {
		name     string
		rate     float64
		fail     bool
		wantOpen bool
	}{
		{"declines counted as successes never trip", 1, false, false},
		{"declines counted as failures trip after the threshold", 1, true, true},
		{"one in ten declined, counted as failures, never five in a row", 0.1, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := healthy
			c.BusinessErrors, c.BusinessErrorsFail, c.BusinessErrorsEven = tc.rate, tc.fail, true
			rep := runVirtual(t, c, ModeBreaker, ModeFusebox)
			for _, m := range rep.Modes {
				s := m.Summary
				if !tc.wantOpen {
					assert.Nil(t, s.OpenedAfter, "%s", s.Mode)
					assert.Equal(t, 200, s.Payments.OK+s.Payments.Declined+s.Payments.CutOff, "%s", s.Mode)
					assert.InDelta(t, 200*tc.rate, s.Payments.Declined, 1, "%s: every 1/rate-th call declined", s.Mode)
					continue
				}
				// Calls at 0.0 ... 0.4 s are declined 100 ms later: the fifth trips.
				assert.InDelta(t, 0.5, secsOf(t, s.OpenedAfter, "opening"), 0.001, "%s", s.Mode)
				assert.Equal(t, breaker.ConsecutiveFailures.String(), m.Transitions[0].Reason, "%s", s.Mode)
			}
		})
	}
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*ExhaustionConfig)
		want string
	}{
		{"no workers", func(c *ExhaustionConfig) { c.Workers = 0 }, "Workers"},
		{"no catalog traffic", func(c *ExhaustionConfig) { c.CatalogRate = 0 }, "CatalogRate"},
		{"unbounded traffic", func(c *ExhaustionConfig) { c.PaymentRate = 1e9 }, "PaymentRate"},
		{"outage ends before it starts", func(c *ExhaustionConfig) { c.OutageEnd = c.OutageStart - 1 }, "outage"},
		{"a business error share above 1", func(c *ExhaustionConfig) { c.BusinessErrors = 2 }, "BusinessErrors"},
		{"slow motion", func(c *ExhaustionConfig) { c.Speed = 0.5 }, "Speed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultExhaustion()
			tc.edit(&c)
			_, err := RunExhaustion(t.Context(), c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("the executor's rules, in scenario time", func(t *testing.T) {
		c := DefaultExhaustion()
		c.ResetTimeout = c.InvocationTimeout
		err := c.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "ResetTimeout (30s) must exceed InvocationTimeout (30s)")
		c = DefaultExhaustion()
		c.Queue, c.Speed = 5, 10 // a queue adds its wait (default: the invocation timeout)
		assert.ErrorContains(t, c.Validate(), "= 1m0s", "not the wall times at speed 10")
	})
}
