package executor

import (
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// DurationBuckets are the upper bounds of the buckets of the call-duration
// histograms (see Executor.CallDurations), Prometheus's default buckets:
// from 5 ms to 10 s. A call that took longer counts only in the histogram's
// Count, the +Inf bucket.
var DurationBuckets = [NumDurationBuckets]time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// NumDurationBuckets is the number of bounded buckets of a Histogram.
const NumDurationBuckets = 11

// numOutcomes is the number of breaker outcomes: Success, Failure, Ignored.
const numOutcomes = 3

// Histogram is a cumulative histogram of call durations, as Prometheus
// reads one: Buckets[i] counts the calls that took at most
// DurationBuckets[i]; Count counts every call (the +Inf bucket), and Sum is
// their total duration.
type Histogram struct {
	Buckets [NumDurationBuckets]uint64
	Count   uint64
	Sum     time.Duration
}

// CallDurations returns the histograms of the durations of the calls whose
// function ran, by the outcome the breaker recorded, indexed by
// breaker.Outcome: d[breaker.Success], d[breaker.Failure],
// d[breaker.Ignored]. A call's duration runs from the moment it got its
// slot (the queue wait is not part of it) until its function returned, or
// until its deadline for a call that timed out, so a timeout is in the
// histogram of its outcome (usually Failure) at about the invocation
// timeout. Calls that never ran (refused, left the queue, their caller gave
// up before they started) are not in it. The counts only grow; each
// bucket is read atomically, so a snapshot taken while calls end may be a
// call or so apart from one bucket to the next (Count is the sum of the
// buckets read, so it is never below them). An executor that has not
// finished a call yet allocates nothing for them.
func (ex *Executor) CallDurations() (d [3]Histogram) {
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
			if i < NumDurationBuckets {
				d[o].Buckets[i] = cum
			}
		}
		d[o].Count = cum
		d[o].Sum = time.Duration(h[o].sum.Load())
	}
	return d
}

// durations are the counters behind CallDurations: per outcome, calls per
// bucket (not cumulative, so that a call adds to one counter) and the sum
// of their durations. Made at the first call that ends. The sum comes
// first, on the cache line of the first buckets, where most calls end.
type durations [numOutcomes]struct {
	sum    atomic.Int64 // ns
	counts [NumDurationBuckets + 1]atomic.Uint64
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
	for i < NumDurationBuckets && d > int64(DurationBuckets[i]) {
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
