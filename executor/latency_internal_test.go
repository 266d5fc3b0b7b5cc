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

func TestLatencyBuckets(t *testing.T) {
	t.Run("every duration lies in its bucket, which is at most 25 % wide", func(t *testing.T) {
		prev := -1
		for d := int64(1 << latLowBit); d < 1<<latHighBit; d += d/7 + 1 {
			i := latBucket(d)
			require.GreaterOrEqual(t, i, prev, "buckets grow with the duration")
			require.Less(t, i, latBuckets)
			up := int64(latUpper(i))
			require.GreaterOrEqual(t, up, d, "%v", time.Duration(d))
			require.LessOrEqual(t, float64(up), 1.25*float64(d)+1, "%v", time.Duration(d))
			prev = i
		}
	})
	t.Run("out of range durations are clamped", func(t *testing.T) {
		assert.Equal(t, 0, latBucket(0))
		assert.Equal(t, 0, latBucket(-5))
		assert.Equal(t, latBuckets-1, latBucket(1<<62))
	})
	t.Run("a generation is forgotten two windows later", func(t *testing.T) {
		l := &latencies{}
		for range latWindow {
			l.record(int64(time.Second))
		}
		for range 2 * latWindow {
			l.record(int64(time.Millisecond))
		}
		assert.InDelta(t, time.Millisecond, l.quantile(0.99), float64(250*time.Microsecond))
		assert.Zero(t, (&latencies{}).quantile(0.5), "no history")
	})
}

// Sampling thins out after a warm-up, by the whole history: a duration
// that is rare (its histogram bucket young) must not be sampled more often
// than the common ones, or the percentiles skew towards it.
func TestLatencyP99IsNotSkewedByRareDurations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := New("payments", Config{Workers: 4, InvocationTimeout: 10 * time.Second, Breaker: breaker.Config{ResetTimeout: time.Minute}})
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
