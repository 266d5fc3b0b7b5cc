// Package latency is the executor's history of successful call
// durations: a histogram in two generations, read as percentiles, that
// decides whether a full bulkhead is stuck or merely busy and shows in the
// executor's Stats as LatencyP50 and LatencyP99. Mechanism and sampling
// rules: docs/design.md, "The latency history".
package latency

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// The sampling rules its owner follows, and the size of a history.
const (
	Warm    = 256 // successes that are all sampled: a young supplier gets a history fast
	Every   = 8   // then one success in Every is sampled
	Minimum = 20  // fewer samples than this are no history
	Refresh = 32  // samples between two computations of a cached threshold

	window = 512 // samples per generation; percentiles cover the last 1 to 2 generations

	// Buckets: four per power of two from lowBit (1 µs) to highBit
	// (about 18 minutes); a bucket is at most 25 % wide, which is precise
	// enough for a threshold that is a multiple of a percentile.
	subBits    = 2
	lowBit     = 10
	highBit    = 40
	numBuckets = (highBit - lowBit) << subBits
	subCount   = 1 << subBits
)

// Histogram is a histogram of successful call durations in two
// generations: samples go to the current one, which after window
// samples becomes the previous one while the one before is cleared and
// reused. A percentile reads both, so it always covers the last window
// to 2×window samples and follows a supplier whose latency changes.
// Everything is atomic; a sample that races with a rotation may be lost,
// which shifts a percentile by less than a bucket.
//
// A bucket's word holds both generations' counts, 16 bits each (a
// generation holds window samples, far below 65,536): the whole
// history fits in 512 bytes, which every executor that has had a success
// keeps.
type Histogram struct {
	samples atomic.Uint64 // samples ever recorded
	buckets [numBuckets]atomic.Uint32

	// A threshold as last computed from the history (ns; 0: none) and
	// the sample count it was computed at.
	threshold   atomic.Int64
	thresholdAt atomic.Uint64
}

// bucketOf returns the bucket of d.
func bucketOf(d int64) int {
	d = min(max(d, 1<<lowBit), 1<<highBit-1)
	e := bits.Len64(uint64(d)) - 1 // d in [2^e, 2^(e+1))
	sub := int(d>>(e-subBits)) & (subCount - 1)
	return (e-lowBit)<<subBits | sub
}

// upper returns the largest duration of bucket i: percentiles err on
// the slow side, which errs on the side of busy.
func upper(i int) time.Duration {
	e := i>>subBits + lowBit
	sub := int64(i & (subCount - 1))
	return time.Duration((subCount+sub+1)<<(e-subBits) - 1)
}

// Record adds a sample of d ns and returns how many samples it has had.
func (h *Histogram) Record(d int64) uint64 {
	n := h.samples.Add(1) - 1
	shift := 16 * ((n / window) & 1) // this generation's half of each word
	if n%window == 0 && n > 0 {
		for i := range h.buckets { // the generation is reused: forget its old samples
			h.buckets[i].And(^uint32(0xffff << shift))
		}
	}
	h.buckets[bucketOf(d)].Add(1 << shift)
	return n + 1
}

// Samples returns how many samples it has had.
func (h *Histogram) Samples() uint64 { return h.samples.Load() }

// Threshold returns the threshold cached by SetThreshold, or 0 if none is
// cached or Refresh samples or more were recorded since it was.
func (h *Histogram) Threshold() int64 {
	if t := h.threshold.Load(); t != 0 && h.samples.Load()-h.thresholdAt.Load() < Refresh {
		return t
	}
	return 0
}

// SetThreshold caches t, computed when the histogram had n samples; 0
// forgets the cached one.
func (h *Histogram) SetThreshold(t int64, n uint64) {
	h.threshold.Store(t)
	h.thresholdAt.Store(n)
}

// Quantile returns the q-quantile (0 < q < 1) of the recorded samples, to
// within 25 % on the slow side, or 0 with fewer than Minimum of them.
func (h *Histogram) Quantile(q float64) time.Duration {
	var counts [numBuckets]uint32
	total := uint64(0)
	for i := range counts {
		w := h.buckets[i].Load()
		counts[i] = w&0xffff + w>>16
		total += uint64(counts[i])
	}
	if total < Minimum {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	cum := uint64(0)
	for i, c := range counts {
		if cum += uint64(c); cum >= rank {
			return upper(i)
		}
	}
	return upper(numBuckets - 1)
}
