package loadtest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Scenario 1 of the stuck-vs-busy criterion: the seed outage, with the
// executor's default criterion, still trips within about a second.
func TestSeedOutageWithTheStuckCriterion(t *testing.T) {
	t.Parallel()
	t.Run("200 workers, 60 s timeout, 50 payments/s: the bulkhead fills in 0.2 s, the trip comes at 0.9 s", func(t *testing.T) {
		cfg := virtualConfig()
		cfg.Workers, cfg.InvocationTimeout, cfg.ResetTimeout, cfg.PaymentRate = 200, 60*time.Second, 65*time.Second, 50
		s := runVirtual(t, cfg, ModeFusebox).Modes[0].Summary
		// Payments at 0.00 ... 0.18 s take the 10 slots; from 0.20 s they
		// find it full, but fewer than half of its calls are older than
		// 8 × p99 (p99 = 100 ms, to within a 25 % bucket: 100.7 ms, so
		// 805 ms). The fifth call (0.08 s) is that old at 0.885 s: the call
		// of 0.90 s trips.
		assert.InDelta(t, 0.90, secsOf(t, s.OpenedAfter, "opening"), 0.001)
		assert.Equal(t, "saturation", s.OpenedBy)
		assert.Equal(t, 35, s.Payments.Busy, "the calls of 0.20 ... 0.88 s were refused alone")
		assert.GreaterOrEqual(t, s.CatalogAvailabilityOutage, 0.999)
		assert.Zero(t, s.Payments.Refused, "busy refusals hold no shop worker")
	})
	t.Run("a supplier hung from its very first call has no history: the trip waits for half the timeout", func(t *testing.T) {
		cfg := virtualConfig()
		cfg.OutageStart, cfg.OutageEnd = 0, 90*time.Second
		s := runVirtual(t, cfg, ModeFusebox).Modes[0].Summary
		// MaxAge: InvocationTimeout / 2. The fifth call (0.4 s) is 15 s
		// old at 15.4 s.
		assert.InDelta(t, 15.4, secsOf(t, s.OpenedAfter, "opening"), 0.001)
		assert.Equal(t, 144, s.Payments.Busy, "1.0 ... 15.3 s at 10/s")
		assert.GreaterOrEqual(t, s.CatalogAvailabilityOutage, 0.999, "the bulkhead still holds the hung calls")
	})
}

// Scenario 3: business errors at random. Counted as failures, 1/3 of them
// make a run of 5 in a row every 363 calls on average
// ((1 − p⁵) / ((1 − p) p⁵) with p = 1/3), 7.3 s at 50/s; classified as
// successes they never trip.
func TestRandomBusinessErrors(t *testing.T) {
	t.Parallel()
	cfg := DefaultExhaustion()
	cfg.OutageStart, cfg.OutageEnd, cfg.Duration = 0, 0, 10*time.Minute
	cfg.PaymentRate, cfg.BusinessErrors = 50, 1.0/3
	cfg.InvocationTimeout, cfg.ResetTimeout = time.Second, 2*time.Second
	for _, tc := range []struct {
		name  string
		fail  bool
		trips bool
	}{
		{"counted as failures they trip about every 7 s of closed breaker", true, true},
		{"classified as successes they never trip", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.BusinessErrorsFail = tc.fail
			for _, m := range runVirtual(t, c, ModeBreaker, ModeFusebox).Modes {
				s := m.Summary
				answered := s.Payments.OK + s.Payments.Declined
				assert.InDelta(t, 1.0/3, float64(s.Payments.Declined)/float64(answered), 0.02, "%s: a third declined", s.Mode)
				if !tc.trips {
					assert.Zero(t, s.Cycles, "%s", s.Mode)
					assert.Nil(t, s.ClosedBetweenTrips, "%s", s.Mode)
					continue
				}
				between := secsOf(t, s.ClosedBetweenTrips, "a trip")
				t.Logf("%s: %d trips, closed %.2f s between them on average", s.Mode, s.Cycles, between)
				assert.InDelta(t, 7.26, between, 1.5, "%s: 363 calls at 50/s", s.Mode)
				assert.Greater(t, s.Cycles, 40, "%s", s.Mode)
			}
		})
	}
	t.Run("declining evenly, five in a row never happen", func(t *testing.T) {
		c := cfg
		c.BusinessErrorsFail, c.BusinessErrorsEven = true, true
		s := runVirtual(t, c, ModeBreaker).Modes[0].Summary
		assert.Zero(t, s.Cycles)
		assert.InDelta(t, 10000, s.Payments.Declined, 2, "every third of 30,000 (the last cut off at the end)")
	})
}
