package compare

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/core/timex"

	"github.com/fusebox-go/fusebox/priority"
)

// OverloadScenario is a supplier overloaded rather than dead, which
// serves Capacity requests a second. Without a Queue (variant A) it fails
// the excess after the same service time (a token bucket of Burst,
// refilled at Capacity). With one (variant B) it serves requests one after
// the other in arrival order, refuses one that would wait longer than
// Queue, and serves the others even after their callers gave up at
// Timeout. Clients, each with a protection of its own, offer Base ×
// Capacity for Warmup, Load × Capacity for Overload, and Base × Capacity
// again for After, each client a Poisson stream of its share.
type OverloadScenario struct {
	Capacity float64       // C, requests/s the supplier accepts
	Burst    time.Duration // the token bucket holds Burst × Capacity
	Service  time.Duration // until the caller hears, accepted or failed
	Queue    time.Duration // variant B: the longest wait the supplier queues
	Timeout  time.Duration // variant B: the callers' deadline
	Clients  int
	Base     float64 // offered outside the overload, × Capacity
	Load     float64 // offered during the overload, × Capacity
	Warmup   time.Duration
	Overload time.Duration
	After    time.Duration
	Tick     time.Duration // the step of virtual time
	// Critical and Sheddable are the shares of requests of those
	// priorities; the rest are priority.Default.
	Critical, Sheddable float64
	Seed                uint64 // of the arrivals and the priorities
}

// OverloadScenarioFull is the comparison of docs/throttle.md at load×C: 50
// clients, C = 1,000/s, 50 ms service, a 60 s overload between 10 s and
// 30 s at 0.5 × C. queued picks variant B: a queue of up to 2 s of work,
// callers that give up after 1 s.
func OverloadScenarioFull(load float64, queued bool) OverloadScenario {
	s := OverloadScenario{
		Capacity: 1000, Burst: 100 * time.Millisecond, Service: 50 * time.Millisecond,
		Clients: 50, Base: 0.5, Load: load,
		Warmup: 10 * time.Second, Overload: 60 * time.Second, After: 30 * time.Second,
		Tick: 5 * time.Millisecond, Seed: 1,
	}
	if queued {
		s.Queue, s.Timeout = 2*time.Second, time.Second
	}
	return s
}

// validate returns an error naming every field of s that RunOverload
// cannot run with.
func (s OverloadScenario) validate() error {
	var errs []error
	bad := func(field string, v any, want string) {
		errs = append(errs, fmt.Errorf("compare: OverloadScenario.%s must be %s, got %v", field, want, v))
	}
	if !(s.Capacity > 0) || math.IsInf(s.Capacity, 0) {
		bad("Capacity", s.Capacity, "a positive number")
	}
	if s.Clients <= 0 {
		bad("Clients", s.Clients, "positive")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Base", s.Base}, {"Load", s.Load}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			bad(f.name, f.v, "a positive number")
		}
	}
	if s.Tick <= 0 || time.Second%s.Tick != 0 {
		bad("Tick", s.Tick, "positive and a divisor of 1s")
	}
	if s.Overload < time.Second {
		bad("Overload", s.Overload, "at least 1s")
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"Warmup", s.Warmup}, {"Overload", s.Overload}, {"After", s.After}} {
		if f.d < 0 || f.d%time.Second != 0 {
			bad(f.name, f.d, "whole seconds")
		}
	}
	if s.Service <= 0 {
		bad("Service", s.Service, "positive")
	}
	if s.Queue < 0 {
		bad("Queue", s.Queue, "0 (variant A) or positive")
	}
	if s.Queue > 0 && s.Timeout <= 0 {
		bad("Timeout", s.Timeout, "positive with a Queue")
	}
	if s.Queue == 0 && s.Burst*time.Duration(s.Capacity) < time.Second {
		bad("Burst", s.Burst, "at least one request's worth (1/Capacity) without a Queue")
	}
	if !(s.Critical >= 0 && s.Sheddable >= 0 && s.Critical+s.Sheddable <= 1) {
		bad("Critical and Sheddable", [2]float64{s.Critical, s.Sheddable}, "shares in [0, 1] adding up to at most 1")
	}
	return errors.Join(errs...)
}

// OverloadRun is what one kind did in an OverloadScenario. Per second of
// the scenario (requests counted in the second they were offered):
type OverloadRun struct {
	Kind     string
	Scenario OverloadScenario
	Offered  []int // requests the clients' applications attempted
	Reached  []int // requests sent to the supplier
	Success  []int // requests the supplier accepted
	// OfferedBy and SuccessBy count, over the overload, offered and
	// successful requests per priority.
	OfferedBy, SuccessBy [priority.Levels]int
	// Flaps counts, over all clients, the seconds of the overload in
	// which a client that had refused requests let every one through,
	// and then refused again: the whole load let back in and cut again.
	Flaps int
	// Opens and Cycles sum States over all clients; HasStates is false
	// for kinds without states.
	Opens, Cycles int
	HasStates     bool
}

// Load is the supplier's load during the overload, × C.
func (r OverloadRun) Load() float64 {
	a, b := r.overload()
	return float64(sum(r.Reached[a:b])) / (float64(b-a) * r.Scenario.Capacity)
}

// SuccessRate is the share of the requests offered during the overload
// that succeeded.
func (r OverloadRun) SuccessRate() float64 {
	a, b := r.overload()
	return float64(sum(r.Success[a:b])) / float64(max(1, sum(r.Offered[a:b])))
}

// Recovery is how long after the overload the first second began in which
// at least share of the requests offered succeeded (1: every one), or -1
// if none did within After. The run's last second, some of whose answers
// would come after the end, is not counted.
func (r OverloadRun) Recovery(share float64) time.Duration {
	_, b := r.overload()
	for s := b; s < len(r.Offered)-1; s++ {
		if r.Offered[s] > 0 && float64(r.Success[s]) >= share*float64(r.Offered[s]) {
			return time.Duration(s-b) * time.Second
		}
	}
	return -1
}

func (r OverloadRun) overload() (from, to int) {
	a := int(r.Scenario.Warmup / time.Second)
	return a, a + int(r.Scenario.Overload/time.Second)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// RunOverload runs s with one instance of kind per client, in the current
// time: call it inside a testing/synctest bubble, where it takes no real
// time but the CPU the libraries use. It sleeps a Tick at a time; every
// library reads the (virtual) clock itself.
func RunOverload(s OverloadScenario, kind ThrottleKind) (OverloadRun, error) {
	if err := s.validate(); err != nil {
		return OverloadRun{}, err
	}
	// go-zero's clock (timex.Now) is the time since its package was
	// initialized, less 13 months; a bubble's clock starts in 2000,
	// before that, and go-zero's forced pass (one request a second
	// while it drops) needs the clock positive. So move the bubble's
	// clock past the real one first.
	if d := -timex.Now(); d > 0 {
		time.Sleep(d + time.Hour)
	}
	secs := int((s.Warmup + s.Overload + s.After) / time.Second)
	run := OverloadRun{Kind: kind.Name, Scenario: s,
		Offered: make([]int, secs), Reached: make([]int, secs), Success: make([]int, secs)}
	type client struct {
		prot     ThrottleClient
		rng      *rand.Rand
		next     time.Duration // of the next arrival, since the start
		refused  bool          // in the current second
		sent     bool          // in the current second
		everShut bool          // refused in an earlier second of the overload
		free     bool          // a second with every request sent since then
	}
	clients := make([]*client, s.Clients)
	for i := range clients {
		// Some libraries seed their own random source from the clock:
		// each client starts a nanosecond apart, as no two processes
		// start at once.
		time.Sleep(time.Nanosecond)
		p, err := kind.New()
		if err != nil {
			return run, fmt.Errorf("%s: %w", kind.Name, err)
		}
		clients[i] = &client{prot: p, rng: rand.New(rand.NewPCG(s.Seed, uint64(i)))}
	}
	type pending struct {
		done     func(bool)
		accepted bool
		second   int
	}
	due := make([][]pending, int(max(s.Service, s.Timeout)/s.Tick)+2) // a ring of ticks
	var busyUntil time.Duration                                       // variant B: when the supplier has served its queue
	type arrival struct {
		at time.Duration
		c  int
	}
	var (
		arrivals []arrival
		tokens   = s.Capacity * s.Burst.Seconds()
		last     time.Duration
		ticks    = int(time.Duration(secs) * time.Second / s.Tick)
		a, b     = run.overload()
	)
	for k := range ticks {
		now := time.Duration(k) * s.Tick
		sec := int(now / time.Second)
		// Answers due now.
		slot := k % len(due)
		for _, p := range due[slot] {
			p.done(p.accepted)
			if p.accepted {
				run.Success[p.second]++
			}
		}
		due[slot] = due[slot][:0]
		// Arrivals in [now, now+Tick), in the order they arrive.
		rate := s.Base
		if sec >= a && sec < b {
			rate = s.Load
		}
		mean := float64(s.Clients) / (rate * s.Capacity) // seconds between one client's arrivals
		arrivals = arrivals[:0]
		for i, c := range clients {
			if k == 0 {
				c.next = time.Duration(c.rng.ExpFloat64() * mean * float64(time.Second))
			}
			for c.next < now+s.Tick {
				arrivals = append(arrivals, arrival{c.next, i})
				c.next += time.Duration(c.rng.ExpFloat64() * mean * float64(time.Second))
			}
		}
		slices.SortFunc(arrivals, func(x, y arrival) int { return cmp.Compare(x.at, y.at) })
		for _, ar := range arrivals {
			c := clients[ar.c]
			p := pick(c.rng, s)
			run.Offered[sec]++
			if sec >= a && sec < b {
				run.OfferedBy[p]++
			}
			done, ok := c.prot.Admit(p)
			if !ok {
				c.refused = true
				continue
			}
			c.sent = true
			run.Reached[sec]++
			var accepted bool
			answer := ar.at + s.Service
			if s.Queue == 0 {
				// The token bucket, at the request's own instant.
				tokens = min(s.Capacity*s.Burst.Seconds(), tokens+s.Capacity*(ar.at-last).Seconds())
				last = ar.at
				if accepted = tokens >= 1; accepted {
					tokens--
				}
			} else if begin := max(ar.at, busyUntil); begin-ar.at <= s.Queue {
				// Queued and served, whether its caller waits or not.
				busyUntil = begin + time.Duration(float64(time.Second)/s.Capacity)
				answer = busyUntil + s.Service
				if accepted = answer-ar.at <= s.Timeout; !accepted {
					answer = ar.at + s.Timeout
				}
			}
			if accepted && sec >= a && sec < b {
				run.SuccessBy[p]++
			}
			at := max(k+1, int(answer/s.Tick))
			due[at%len(due)] = append(due[at%len(due)], pending{done, accepted, sec})
		}
		// At the end of a second of the overload, each client's flap state.
		if (k+1)%int(time.Second/s.Tick) == 0 {
			for _, c := range clients {
				if sec >= a && sec < b {
					switch {
					case c.refused && c.free:
						run.Flaps++
						c.free = false
					case c.refused:
						c.everShut = true
					case c.sent && c.everShut:
						c.free = true
					}
				}
				c.refused, c.sent = false, false
			}
		}
		time.Sleep(s.Tick)
	}
	for _, c := range clients {
		o, cy, ok := c.prot.States()
		run.Opens, run.Cycles, run.HasStates = run.Opens+o, run.Cycles+cy, ok
	}
	return run, nil
}

// pick draws a request's priority from the scenario's shares.
func pick(r *rand.Rand, s OverloadScenario) priority.Priority {
	if s.Critical == 0 && s.Sheddable == 0 {
		return priority.Default
	}
	switch x := r.Float64(); {
	case x < s.Critical:
		return priority.Critical
	case x < s.Critical+s.Sheddable:
		return priority.Sheddable
	}
	return priority.Default
}

// OverloadTable formats runs as the table of docs/throttle.md.
func OverloadTable(runs []OverloadRun) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-22s %7s %8s %8s %6s %6s %6s %9s %9s\n",
		"client", "offered", "supplier", "success", "flaps", "opens", "cycles", "full", "99 %")
	for _, r := range runs {
		rec := func(share float64) string {
			if d := r.Recovery(share); d >= 0 {
				return d.String()
			}
			return "> " + r.Scenario.After.String()
		}
		opens, cycles := "-", "-"
		if r.HasStates {
			opens, cycles = fmt.Sprint(r.Opens), fmt.Sprint(r.Cycles)
		}
		fmt.Fprintf(&sb, "%-22s %6.1f× %7.2f× %7.1f%% %6d %6s %6s %9s %9s\n",
			r.Kind, r.Scenario.Load, r.Load(), 100*r.SuccessRate(), r.Flaps, opens, cycles, rec(1), rec(0.99))
	}
	return sb.String()
}
