package executor_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

func TestLatencyQuantile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := executor.New("search", executor.Config{Slots: 4, InvocationTimeout: 10 * time.Second, Breaker: breaker.Config{ResetTimeout: time.Minute}})
		require.NoError(t, err)
		assert.Zero(t, ex.Latency(0.95), "no history")
		// 90 calls of 10 ms, 10 of 200 ms: the p50 is fast, the p95 slow.
		for i := range 100 {
			d := 10 * time.Millisecond
			if i%10 == 9 {
				d = 200 * time.Millisecond
			}
			_, err := executor.Do(context.Background(), ex, func(context.Context) (int, error) { time.Sleep(d); return 0, nil })
			require.NoError(t, err)
		}
		s := ex.Stats()
		assert.Equal(t, s.LatencyP50, ex.Latency(0.50), "the same history as Stats")
		assert.Equal(t, s.LatencyP99, ex.Latency(0.99))
		assert.InDelta(t, 10*time.Millisecond, ex.Latency(0.5), float64(2500*time.Microsecond))
		assert.InDelta(t, 200*time.Millisecond, ex.Latency(0.95), float64(50*time.Millisecond))
		for _, q := range []float64{0, 1, -0.5, 2} {
			assert.Zero(t, ex.Latency(q), "q = %v is not a quantile", q)
		}
		require.NoError(t, ex.Close(context.Background()))
	})
}
