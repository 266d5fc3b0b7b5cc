package shed

import (
	"math"
	"runtime/metrics"
	"time"
)

// schedLatencies is the runtime's histogram of the time goroutines spent
// runnable before they ran: the length of the run queue, in time.
const schedLatencies = "/sched/latencies:seconds"

// trackingPeriod is the runtime's sampling of scheduling latencies: one
// transition of a goroutine out of running in 8 is timed (gTrackingPeriod).
const trackingPeriod = 8

// newRunnableWait returns the default signal: each call returns the time
// goroutines spent runnable, waiting for a CPU, since the last call,
// estimated from the runtime's histogram of scheduling latencies
// (runtime/metrics) times its sampling period.
func newRunnableWait() func() time.Duration {
	s := []metrics.Sample{{Name: schedLatencies}}
	var prev []uint64
	return func() time.Duration {
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindFloat64Histogram {
			return 0 // not this runtime: no signal, no shedding
		}
		h := s[0].Value.Float64Histogram()
		w := sumDelta(h.Buckets, h.Counts, prev)
		prev = append(prev[:0], h.Counts...)
		return time.Duration(w * trackingPeriod * float64(time.Second))
	}
}

// sumDelta returns the sum, in seconds, of the samples counted since
// prev, each taken at the middle of its bucket (the finite bound of an
// unbounded one).
func sumDelta(buckets []float64, counts, prev []uint64) float64 {
	var sum float64
	for i, c := range counts {
		if i < len(prev) {
			c -= prev[i]
		}
		if c == 0 {
			continue
		}
		lo, hi := buckets[i], buckets[i+1]
		v := (lo + hi) / 2
		switch {
		case math.IsInf(lo, -1):
			v = max(hi, 0)
		case math.IsInf(hi, 1):
			v = lo
		}
		sum += float64(c) * v
	}
	return sum
}
