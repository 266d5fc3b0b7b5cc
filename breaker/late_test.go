package breaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

// The calls admitted before a trip that answer slowly after the breaker
// closed again are not in the new closed period's slow-call window: an
// incident does not count against the supplier's recovery.
func TestSlowAnswersOfAnOlderGenerationAreNotInTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(t, breaker.Config{SlowCallRate: 0.5, SlowCallDuration: time.Second, MinimumCalls: 4,
			WindowSize: 10, ResetTimeout: 5 * time.Second})
		var stale []breaker.Permit
		for range 4 {
			p, err := b.Allow()
			require.NoError(t, err)
			stale = append(stale, p)
		}
		b.Trip(breaker.Manual)
		time.Sleep(5 * time.Second)
		probe, err := b.Allow()
		require.NoError(t, err)
		time.Sleep(3 * time.Second) // a slow probe: it closes all the same
		probe.Done(nil)
		require.Equal(t, breaker.Closed, b.State())
		for _, p := range stale {
			p.Done(nil) // 8 s, slow
		}
		s := b.Stats()
		assert.Zero(t, s.WindowCalls, "neither the stale answers nor the probe are in the new window")
		assert.Equal(t, uint64(4), s.Late)
		assert.Equal(t, breaker.Closed, s.State)
	})
}
