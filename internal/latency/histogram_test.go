package latency

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLatencyBuckets(t *testing.T) {
	t.Run("every duration lies in its bucket, which is at most 25 % wide", func(t *testing.T) {
		prev := -1
		for d := int64(1 << lowBit); d < 1<<highBit; d += d/7 + 1 {
			i := bucketOf(d)
			require.GreaterOrEqual(t, i, prev, "buckets grow with the duration")
			require.Less(t, i, numBuckets)
			up := int64(upper(i))
			require.GreaterOrEqual(t, up, d, "%v", time.Duration(d))
			require.LessOrEqual(t, float64(up), 1.25*float64(d)+1, "%v", time.Duration(d))
			prev = i
		}
	})
	t.Run("out of range durations are clamped", func(t *testing.T) {
		assert.Equal(t, 0, bucketOf(0))
		assert.Equal(t, 0, bucketOf(-5))
		assert.Equal(t, numBuckets-1, bucketOf(1<<62))
	})
	t.Run("a generation is forgotten two windows later", func(t *testing.T) {
		l := &Histogram{}
		for range window {
			l.Record(int64(time.Second))
		}
		for range 2 * window {
			l.Record(int64(time.Millisecond))
		}
		assert.InDelta(t, time.Millisecond, l.Quantile(0.99), float64(250*time.Microsecond))
		assert.Zero(t, (&Histogram{}).Quantile(0.5), "no history")
	})
}

func TestThresholdCache(t *testing.T) {
	h := &Histogram{}
	for range Minimum {
		h.Record(int64(time.Millisecond))
	}
	assert.Zero(t, h.Threshold(), "nothing cached yet")
	h.SetThreshold(42, h.Samples())
	assert.Equal(t, int64(42), h.Threshold(), "cached")
	for range Refresh - 1 {
		h.Record(int64(time.Millisecond))
	}
	assert.Equal(t, int64(42), h.Threshold(), "still fresh after Refresh-1 samples")
	h.Record(int64(time.Millisecond))
	assert.Zero(t, h.Threshold(), "stale after Refresh samples")
	h.SetThreshold(0, h.Samples())
	assert.Zero(t, h.Threshold(), "forgotten")
}
