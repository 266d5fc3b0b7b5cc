package executor

import (
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/internal/latency"
)

// DurationBuckets bound Stats.Durations' buckets (Prometheus's defaults).
var DurationBuckets = [numDurationBuckets]time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// numDurationBuckets is the number of bounded buckets of a Histogram.
const numDurationBuckets = latency.NumBuckets

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
	if rc := ex.rare.Load(); rc != nil {
		if h := rc.dur.Load(); h != nil {
			for o := range d {
				d[o].Buckets, d[o].Count, d[o].Sum = h.Read(o)
			}
		}
	}
	return d
}

// recordDuration counts a call of outcome o that took d ns, and returns
// how many calls its bucket has counted, this one included (0 for an
// outcome it does not know). The histograms are made at the first call
// that ends.
func (ex *Executor) recordDuration(o breaker.Outcome, d int64) uint64 {
	rc := ex.counts()
	h := rc.dur.Load()
	if h == nil {
		rc.dur.CompareAndSwap(nil, &latency.Durations{})
		h = rc.dur.Load()
	}
	return h.Add(int(o), d, &DurationBuckets)
}

// successes is the number of calls recorded as successes: those in the
// success histogram and the untimed ones.
func (rc *rareCounts) successes() uint64 {
	n := rc.untimed.Load()
	if h := rc.dur.Load(); h != nil {
		_, c, _ := h.Read(int(breaker.Success))
		n += c
	}
	return n
}
