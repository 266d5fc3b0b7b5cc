package executor

import (
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// DurationBuckets bound Stats.Durations' buckets (Prometheus's defaults).
var DurationBuckets = [numDurationBuckets]time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// numDurationBuckets is the number of bounded buckets of a Histogram.
const numDurationBuckets = 11

// numOutcomes is the number of breaker outcomes: Success, Failure, Ignored.
const numOutcomes = 3

// Histogram is cumulative: Buckets[i] counts calls that took at most
// DurationBuckets[i], Count all of them; Sum is their total duration.
type Histogram struct {
	Buckets [numDurationBuckets]uint64
	Count   uint64
	Sum     time.Duration
}

// callDurations reads the histograms of Stats.Durations. An executor that
// has not finished a call yet allocates nothing for them.
func (ex *Executor) callDurations() (d [numOutcomes]Histogram) {
	rc := ex.rare.Load()
	if rc == nil {
		return d
	}
	h := rc.dur.Load()
	if h == nil {
		return d
	}
	for o := range d {
		var cum uint64
		for i := range h[o].counts {
			cum += h[o].counts[i].Load()
			if i < numDurationBuckets {
				d[o].Buckets[i] = cum
			}
		}
		d[o].Count = cum
		d[o].Sum = time.Duration(h[o].sum.Load())
	}
	return d
}

// durations are the counters behind Stats.Durations: per outcome, calls per
// bucket (not cumulative, so that a call adds to one counter) and the sum
// of their durations. Made at the first call that ends. The sum comes
// first, on the cache line of the first buckets, where most calls end.
type durations [numOutcomes]struct {
	sum    atomic.Int64 // ns
	counts [numDurationBuckets + 1]atomic.Uint64
}

// recordDuration counts a call of outcome o that took d ns, and returns
// how many calls its bucket has counted, this one included (0 for an
// outcome it does not know).
func (ex *Executor) recordDuration(o breaker.Outcome, d int64) uint64 {
	if int(o) >= numOutcomes {
		return 0
	}
	rc := ex.counts()
	h := rc.dur.Load()
	if h == nil {
		rc.dur.CompareAndSwap(nil, &durations{})
		h = rc.dur.Load()
	}
	d = max(d, 0)
	// A linear search: most calls end in the first buckets.
	i := 0
	for i < numDurationBuckets && d > int64(DurationBuckets[i]) {
		i++
	}
	h[o].sum.Add(d)
	return h[o].counts[i].Add(1)
}

// successes is the number of calls recorded as successes: those in the
// success histogram and the untimed ones.
func (rc *rareCounts) successes() uint64 {
	n := rc.untimed.Load()
	if h := rc.dur.Load(); h != nil {
		for i := range h[breaker.Success].counts {
			n += h[breaker.Success].counts[i].Load()
		}
	}
	return n
}
