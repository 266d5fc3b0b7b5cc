package loadtest

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// capacitySupplier is a supplier with finite capacity: servers serve one
// call at a time each, for a lognormal service time, and the calls beyond
// them wait in the supplier's own first-in first-out queue. Overload is
// real: a client that sends more than the servers take sees the latency
// grow with the queue. A call whose client gives up still holds its place
// and its server (the supplier does the work anyway), as a real one does.
// The number of servers and the service time may change over time
// (servers and scale); a hang makes every call that arrives from then on
// wait until its client gives up. Safe for concurrent use. Time is the
// wall clock: run it under testing/synctest.
type capacitySupplier struct {
	start   time.Time
	median  time.Duration // service time: lognormal with this median ...
	sigma   float64       // ... and this σ of its logarithm
	servers func(t time.Duration) int
	scale   func(t time.Duration) float64 // service time multiplier; nil: 1
	hangAt  time.Duration                 // 0: never

	mu   sync.Mutex
	rng  *rand.Rand
	free []time.Duration // when each server comes free (since start)
}

func newCapacitySupplier(seed uint64, maxServers int, median time.Duration, sigma float64) *capacitySupplier {
	return &capacitySupplier{
		start: time.Now(), median: median, sigma: sigma,
		servers: func(time.Duration) int { return maxServers },
		rng:     rand.New(rand.NewPCG(seed, seed^0x5eed)),
		free:    make([]time.Duration, maxServers),
	}
}

// healthyP99 is the 99th percentile of the service time, without queueing.
func (s *capacitySupplier) healthyP99() time.Duration {
	return time.Duration(float64(s.median) * math.Exp(s.sigma*2.3263))
}

// call is one call: it returns nil once a server has served it, or the
// context's error.
func (s *capacitySupplier) call(ctx context.Context) error {
	now := time.Since(s.start)
	if s.hangAt > 0 && now >= s.hangAt {
		<-ctx.Done()
		return ctx.Err()
	}
	s.mu.Lock()
	c := min(max(s.servers(now), 1), len(s.free))
	lane := 0
	for i := 1; i < c; i++ {
		if s.free[i] < s.free[lane] {
			lane = i
		}
	}
	service := float64(s.median) * math.Exp(s.sigma*s.rng.NormFloat64())
	if s.scale != nil {
		service *= s.scale(now)
	}
	done := max(now, s.free[lane]) + time.Duration(service)
	s.free[lane] = done
	// Answers leave on the millisecond: calls that end together wake
	// together, which makes a run several times cheaper under synctest,
	// and a millisecond is small beside the 20 ms of a call.
	done = (done + capTick - 1) / capTick * capTick
	s.mu.Unlock()
	t := time.NewTimer(done - now)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
