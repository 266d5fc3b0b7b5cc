package executor

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// Latency tracking: the durations of recent successful calls, kept so that
// a full bulkhead can be judged stuck or merely busy (see StuckConfig) and
// shown in Stats as LatencyP50 and LatencyP99.
//
// The cost sits where a call ends, on successes only, and mostly not even
// there: once latWarm successes are sampled, only one in latEvery is timed
// (a clock read and two atomic adds), the others pay one atomic load and a
// branch. A percentile is read only when a call finds the bulkhead full
// (and then at most once per latRefresh samples) or when Stats is called.
const (
	latWarm    = 256 // successes that are all sampled: a young supplier gets a history fast
	latEvery   = 8   // then one success in latEvery is sampled
	latWindow  = 512 // samples per generation; percentiles cover the last 1 to 2 generations
	latMinimum = 20  // fewer samples than this are no history
	latRefresh = 32  // samples between two computations of the stuck threshold

	// Buckets: four per power of two from latLowBit (1 µs) to latHighBit
	// (about 18 minutes); a bucket is at most 25 % wide, which is precise
	// enough for a threshold that is a multiple of a percentile.
	latSubBits  = 2
	latLowBit   = 10
	latHighBit  = 40
	latBuckets  = (latHighBit - latLowBit) << latSubBits
	latSubCount = 1 << latSubBits
)

// latencies is a histogram of successful call durations in two
// generations: samples go to the current one, which after latWindow
// samples becomes the previous one while the one before is cleared and
// reused. A percentile reads both, so it always covers the last latWindow
// to 2×latWindow samples and follows a supplier whose latency changes.
// Everything is atomic; a sample that races with a rotation may be lost,
// which shifts a percentile by less than a bucket.
//
// A bucket's word holds both generations' counts, 16 bits each (a
// generation holds latWindow samples, far below 65,536): the whole
// history fits in 512 bytes, which every executor that has had a success
// keeps.
type latencies struct {
	samples atomic.Uint64 // samples ever recorded
	buckets [latBuckets]atomic.Uint32

	// The stuck threshold as last computed (ns; 0: not yet, or no
	// history) and the sample count it was computed at.
	threshold   atomic.Int64
	thresholdAt atomic.Uint64
}

// latBucket returns the bucket of d.
func latBucket(d int64) int {
	d = min(max(d, 1<<latLowBit), 1<<latHighBit-1)
	e := bits.Len64(uint64(d)) - 1 // d in [2^e, 2^(e+1))
	sub := int(d>>(e-latSubBits)) & (latSubCount - 1)
	return (e-latLowBit)<<latSubBits | sub
}

// latUpper returns the largest duration of bucket i: percentiles err on
// the slow side, which errs on the side of busy.
func latUpper(i int) time.Duration {
	e := i>>latSubBits + latLowBit
	sub := int64(i & (latSubCount - 1))
	return time.Duration((latSubCount+sub+1)<<(e-latSubBits) - 1)
}

// record adds one sample and returns how many it has had.
func (l *latencies) record(d int64) uint64 {
	n := l.samples.Add(1) - 1
	shift := 16 * ((n / latWindow) & 1) // this generation's half of each word
	if n%latWindow == 0 && n > 0 {
		for i := range l.buckets { // the generation is reused: forget its old samples
			l.buckets[i].And(^uint32(0xffff << shift))
		}
	}
	l.buckets[latBucket(d)].Add(1 << shift)
	return n + 1
}

// quantile returns the q-quantile (0 < q < 1) of the recorded samples, or
// 0 with fewer than latMinimum of them.
func (l *latencies) quantile(q float64) time.Duration {
	var counts [latBuckets]uint32
	total := uint64(0)
	for i := range counts {
		w := l.buckets[i].Load()
		counts[i] = w&0xffff + w>>16
		total += uint64(counts[i])
	}
	if total < latMinimum {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	cum := uint64(0)
	for i, c := range counts {
		if cum += uint64(c); cum >= rank {
			return latUpper(i)
		}
	}
	return latUpper(latBuckets - 1)
}

// observe is a successful call that took d ns (-1: not known), the n-th
// of its histogram bucket, admitted with permit p: sample its duration if
// its turn has come. The warm-up counts the whole history; after it,
// taking every latEvery-th call of each bucket thins every duration alike,
// so the percentiles keep their shape.
//
// Only the present teaches (docs/design.md, "What the history learns
// from"): a call admitted under an older breaker generation (before a
// trip: the late answers of an incident must not raise the threshold that
// detects the next one; or a probe, whose success closed the breaker) and
// a call that returned after its deadline (inTime false: it ran its whole
// timeout, which says the supplier hung, not how long it takes) or that
// ran longer than the invocation timeout now in force (admitted before a
// Reconfigure shortened it: today it would have timed out) are not
// sampled. Their durations are in Stats.Durations all the same.
func (ex *Executor) observe(d int64, n uint64, inTime bool, p breaker.Permit) {
	if d < 0 {
		return
	}
	rc := ex.counts()
	if n%latEvery != 0 && rc.warm.Load() {
		return
	}
	if !inTime || d >= ex.timeout.Load() || !p.Current() {
		return
	}
	l := rc.lat.Load()
	if l == nil {
		// Made at the first success: an executor that never had one (an
		// idle supplier of a large Group) does not pay for it.
		rc.lat.CompareAndSwap(nil, &latencies{})
		l = rc.lat.Load()
	}
	if l.record(d) >= latWarm && !rc.warm.Load() {
		rc.warm.Store(true)
	}
}

// latencyStats returns the median and the 99th percentile of recent
// successful calls, 0 and 0 without history.
func (ex *Executor) latencyStats() (p50, p99 time.Duration) {
	rc := ex.rare.Load()
	if rc == nil || rc.lat.Load() == nil {
		return 0, 0
	}
	l := rc.lat.Load()
	return l.quantile(0.50), l.quantile(0.99)
}
