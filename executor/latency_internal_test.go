package executor

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

// Sampling thins out after a warm-up, by the whole history: a duration
// that is rare (its histogram bucket young) must not be sampled more often
// than the common ones, or the percentiles skew towards it.
func TestLatencyP99IsNotSkewedByRareDurations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := New("payments", Config{Slots: 4, InvocationTimeout: 10 * time.Second, Breaker: breaker.Config{ResetTimeout: time.Minute}})
		require.NoError(t, err)
		const calls, slowEvery = 4000, 200 // 0.5 % slow: the p99 is a fast call
		for i := range calls {
			d := time.Millisecond
			if i%slowEvery == slowEvery-1 {
				d = 3 * time.Second
			}
			_, err := Do(context.Background(), ex, func(context.Context) (int, error) { time.Sleep(d); return 0, nil })
			require.NoError(t, err)
		}
		s := ex.Stats()
		assert.Less(t, s.LatencyP99, 10*time.Millisecond, "got a p99 of %v with 0.5 %% of calls slow", s.LatencyP99)
		require.NoError(t, ex.Close(context.Background()))
	})
}
