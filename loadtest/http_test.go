package loadtest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The HTTP transport in real time, compressed: about 6 s of wall time. The
// machine may be busy (and -race slows it down), so timings are not
// asserted, only their order and what no stall can change.
func TestHTTPExhaustion(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	// A smaller shop at a gentle speed, so that even under -race the machine
	// keeps up with the schedule: 40 workers are exhausted 4 s into the
	// outage, the bulkhead trips 1 s into it.
	cfg := DefaultExhaustion()
	cfg.Transport, cfg.Speed, cfg.ProgressEvery = HTTP, 5, 0
	cfg.Workers, cfg.CatalogRate = 40, 20
	cfg.InvocationTimeout, cfg.ResetTimeout = 6*time.Second, 7*time.Second
	cfg.OutageStart, cfg.OutageEnd, cfg.Duration = 1*time.Second, 9*time.Second, 10*time.Second
	rep, err := RunExhaustion(t.Context(), cfg)
	require.NoError(t, err)
	require.Len(t, rep.Modes, 3)
	for _, m := range rep.Modes {
		s := m.Summary
		assert.Positive(t, s.Payments.OK, "%s: payments went through before the outage", s.Mode)
		assert.Greater(t, s.Payments.Offered, 50, "%s: 10/s for 10 s, some skipped at worst", s.Mode)
		assert.Zero(t, s.Payments.Errors, "%s: loopback HTTP does not fail", s.Mode)
	}
	timeout, fusebox := rep.Modes[0].Summary, rep.Modes[2].Summary
	require.NotNil(t, timeout.ExhaustedAfter, "8 s of hanging payments exhaust 40 workers")
	require.NotNil(t, fusebox.OpenedAfter)
	assert.Less(t, *fusebox.OpenedAfter, *timeout.ExhaustedAfter, "the bulkhead trips long before the shop runs out")
	assert.Nil(t, fusebox.ExhaustedAfter)
	assert.Greater(t, fusebox.CatalogAvailabilityOutage, timeout.CatalogAvailabilityOutage)
}

func TestHTTPQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	cfg := DefaultQueue()
	cfg.Transport, cfg.Speed, cfg.ProgressEvery = HTTP, 10, 0
	// A queue of 80 that fills at +4/s (12 arrivals a second, 8 served):
	// its oldest call has waited 10 s when it is full, far more than 8 ×
	// the supplier's p99 (0.125 s; at 10× speed a loaded machine's stalls
	// of the loopback server count ten times over), so the full queue is
	// stuck and trips. The wide excess also keeps the time it fills near
	// 20 s when a loaded machine serves fewer than 8 a second (with 12 CPU
	// hogs beside it, 40 places at +2/s filled after 14.9 s).
	cfg.Queue, cfg.ArrivalRate = 80, 12
	cfg.QueueTimeout, cfg.ResetTimeout, cfg.Duration = 20*time.Second, time.Minute, 30*time.Second
	rep, err := RunQueue(t.Context(), cfg)
	require.NoError(t, err)
	for _, run := range rep.Runs {
		s := run.Summary
		require.NotNil(t, s.FullAfter, run.Name)
		assert.InDelta(t, 20, *s.FullAfter, 5, "%s: 80 places at +4/s", run.Name)
		assert.Positive(t, s.Served, run.Name)
		assert.Zero(t, s.Errors, run.Name)
	}
}
