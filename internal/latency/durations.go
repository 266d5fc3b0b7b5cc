package latency

import (
	"sync/atomic"
	"time"
)

// NumBuckets is the number of bounded buckets of the duration histograms;
// one more counts the calls beyond the last bound.
const NumBuckets = 11

// Durations are the counters behind the executor's Stats.Durations: per
// outcome (0 to 2), calls per bucket (not cumulative, so that a call adds
// to one counter) and the sum of their durations. The sum comes first, on
// the cache line of the first buckets, where most calls end. The zero
// value is ready to use; all methods are safe for concurrent use.
type Durations [3]struct {
	sum    atomic.Int64 // ns
	counts [NumBuckets + 1]atomic.Uint64
}

// Add counts a call of outcome o that took d ns (0 if negative) in the
// first bucket whose bound is at least d, and returns how many calls that
// bucket has counted, this one included; 0 for an outcome out of range.
func (h *Durations) Add(o int, d int64, bounds *[NumBuckets]time.Duration) uint64 {
	if o < 0 || o >= len(h) {
		return 0
	}
	d = max(d, 0)
	// A linear search: most calls end in the first buckets.
	i := 0
	for i < NumBuckets && d > int64(bounds[i]) {
		i++
	}
	h[o].sum.Add(d)
	return h[o].counts[i].Add(1)
}

// Read returns the histogram of outcome o: cumulative counts per bounded
// bucket, the count of all calls and the sum of their durations.
func (h *Durations) Read(o int) (buckets [NumBuckets]uint64, count uint64, sum time.Duration) {
	for i := range h[o].counts {
		count += h[o].counts[i].Load()
		if i < NumBuckets {
			buckets[i] = count
		}
	}
	return buckets, count, time.Duration(h[o].sum.Load())
}
