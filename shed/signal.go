package shed

import (
	"math"
	"runtime"
	"runtime/metrics"
	"time"
)

// schedLatencies is the runtime's histogram of the time goroutines spent
// runnable before they ran: the length of the run queue, in time.
const schedLatencies = "/sched/latencies:seconds"

// trackingPeriod is the runtime's sampling of scheduling latencies: one
// transition of a goroutine out of running in 8 is timed (gTrackingPeriod).
const trackingPeriod = 8

// signal is what the sampler reads every interval: the run queue's wait
// (wait) and how busy the process's CPUs were (busy: the share of
// GOMAXPROCS CPUs its threads ran or waited for the operating system to
// run them, since the last call; negative if not known).
type signal struct {
	wait func() time.Duration
	busy func() float64
}

// runtimeSignal is the signal of a real process.
func runtimeSignal() signal { return signal{wait: newRunnableWait(), busy: newBusy()} }

// newBusy returns the default busy signal, from the threads' times the
// kernel keeps (threadTimes): a process below its CPUs is not full,
// whatever its goroutines wait for while other processes run. A thread's
// wait counts only if it ran a millisecond in the interval or ran and
// waited half of it: the runtime's monitor and idle threads wake often,
// run little and, on a busy host, wait a little for each wake-up, which
// says nothing of the process's backlog; a thread that holds a P and
// gets no CPU waits all along.
func newBusy() func() float64 {
	type times struct{ run, delay int64 }
	prev := map[string]times{}
	threadTimes(func(tid string, run, delay int64) { prev[tid] = times{run, delay} })
	last := time.Now()
	return func() float64 {
		now := time.Now()
		el := now.Sub(last)
		last = now
		var used int64
		cur := make(map[string]times, len(prev))
		ok := threadTimes(func(tid string, run, delay int64) {
			cur[tid] = times{run, delay}
			p := prev[tid] // zero for a new thread
			r, d := max(0, run-p.run), max(0, delay-p.delay)
			used += r
			if r >= int64(time.Millisecond) || r+d >= int64(el/2) {
				used += d
			}
		})
		prev = cur
		if !ok || el <= 0 {
			return -1
		}
		return float64(used) / (float64(el) * float64(runtime.GOMAXPROCS(0)))
	}
}

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
