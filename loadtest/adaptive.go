package loadtest

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// The scenarios of the adaptive limit (docs/adaptive.md): a supplier with
// finite capacity (capacitySupplier), called by Poisson arrivals, through
// one executor with a fixed bulkhead or an adaptive one. All of it runs on
// the wall clock: under testing/synctest a minute of traffic takes a few
// seconds of CPU.
const (
	capServers = 32                    // the supplier's servers (scenarios A, B, C, E, F)
	capService = 20 * time.Millisecond // their median service time
	capSigma   = 0.25                  // lognormal σ: p99 ≈ 1.8 × median
	capRate    = 1120                  // 70 % of 32 servers / 20 ms (a mean service of 20.6 ms: 72 %)
	capTick    = time.Millisecond      // arrivals are drawn per tick
	capSample  = 100 * time.Millisecond
)

// CapacityScenario is one of the scenarios A–F: the traffic and the
// supplier over time.
type CapacityScenario struct {
	Name     string
	Duration time.Duration
	Rate     func(t time.Duration) float64 // calls per second at t
	Servers  func(t time.Duration) int     // the supplier's servers at t
	MaxSrv   int                           // the most servers it ever has
	Median   time.Duration                 // its median service time
	HangAt   time.Duration                 // it hangs from then on (0: never)
	Seed     uint64
}

// Capacity is the most calls per second the supplier can serve, on
// average over the run: its servers at each instant (sampled every
// capSample) over its mean service time, median × e^(σ²/2). No sizing can
// serve more; a hang's seconds count as none. In B it is 32 / 20.6 ms =
// 1551/s.
func (s CapacityScenario) Capacity() float64 {
	mean := s.Median.Seconds() * math.Exp(capSigma*capSigma/2)
	var sum float64
	n := 0
	for t := time.Duration(0); t < s.Duration; t += capSample {
		if s.HangAt == 0 || t < s.HangAt {
			sum += float64(s.Servers(t)) / mean
		}
		n++
	}
	return sum / float64(n)
}

func constRate(r float64) func(time.Duration) float64 {
	return func(time.Duration) float64 { return r }
}
func constSrv(c int) func(time.Duration) int { return func(time.Duration) int { return c } }

// CapacityScenarios returns A–F.
func CapacityScenarios() []CapacityScenario {
	step := func(t time.Duration) int {
		if t >= 10*time.Second && t < 20*time.Second {
			return 8
		}
		return capServers
	}
	bursts := func(t time.Duration) float64 {
		if t >= 10*time.Second && (t-10*time.Second)%(30*time.Second) < 2*time.Second {
			return 10 * capRate / 3.5
		}
		return capRate / 3.5
	}
	base := CapacityScenario{Duration: 30 * time.Second, Rate: constRate(capRate), Servers: constSrv(capServers),
		MaxSrv: capServers, Median: capService, Seed: 1}
	a, b, c, d, e, f := base, base, base, base, base, base
	a.Name = "A steady 70 %"
	b.Name, b.Rate = "B 2× overload", constRate(2*capServers*float64(time.Second/capService))
	c.Name, c.Servers = "C capacity 32 → 8 → 32", step
	d.Name, d.Servers, d.MaxSrv, d.Median = "D latency ×4, same capacity", constSrv(4*capServers), 4*capServers, 4*capService
	e.Name, e.Rate, e.Duration = "E 10× bursts 2 s every 30 s", bursts, 60*time.Second
	f.Name, f.HangAt, f.Duration = "F hang at 10 s", 10*time.Second, 25*time.Second
	return []CapacityScenario{a, b, c, d, e, f}
}

// Sizing is the bulkhead of a run: Slots fixed slots, or (Adaptive) a
// limit from Slots within [1, 256]. Limiter replaces the executor with
// another library's limiter (the compare module runs failsafe-go's
// adaptivelimiter so): no breaker, so FirstOpen stays 0. Loopback sends
// every call over HTTP on 127.0.0.1, through a fusehttp.Transport, to a
// server whose handler is the supplier: real time only (synctest has no
// network), for the demo.
type Sizing struct {
	Slots    int
	Adaptive bool
	Limiter  Limiter
	Loopback bool
}

// A Limiter is a concurrency limiter run in the harness in place of the
// executor. Start is called once per run with the run's context; it
// returns how to submit a call (run fn on a goroutine of its own, with a
// 5 s timeout as the executor's runs have, or refuse it at once), the
// limit and the refusals so far, and how to wait for the calls still
// running.
type Limiter func(ctx context.Context) (submit func(fn func(context.Context) error), stats func() (limit int, refused uint64), wait func())

// CapacityRun is what one run measured.
type CapacityRun struct {
	Goodput   float64       // successes within 2 × the healthy p99, per second
	PerSecond []int         // the same, second by second
	Limits    []int         // the bulkhead's size every 100 ms
	Refused   uint64        // busy refusals
	Opens     int           // openings of the breaker
	FirstOpen time.Duration // when it first opened (0: never)
	// With a hang: the limit at its onset, the calls that reached the
	// hung supplier before the breaker opened, and in the whole run.
	LimitAtHang, HungCalls, HungAll int
	Reasons                         map[string]int // OnChange reasons seen (adaptive)
}

// RunCapacity runs scenario s with sizing z. Under testing/synctest.
func RunCapacity(ctx context.Context, s CapacityScenario, z Sizing) (CapacityRun, error) {
	sup := newCapacitySupplier(s.Seed, s.MaxSrv, s.Median, capSigma)
	sup.servers, sup.hangAt = s.Servers, s.HangAt
	good := time.Duration(2 * float64(sup.healthyP99()))
	var mu sync.Mutex
	seconds := int((s.Duration + time.Second - 1) / time.Second)
	run := CapacityRun{PerSecond: make([]int, seconds), Reasons: map[string]int{}}
	cfg := executor.Config{
		Slots: z.Slots, InvocationTimeout: 5 * time.Second,
		Breaker: breaker.Config{ResetTimeout: 10 * time.Second, OnTransition: func(e breaker.Event) {
			if e.To == breaker.Open {
				mu.Lock()
				if run.Opens++; run.FirstOpen == 0 {
					run.FirstOpen = time.Since(sup.start)
				}
				mu.Unlock()
			}
		}},
	}
	if z.Adaptive {
		cfg.Adaptive = executor.AdaptiveConfig{Max: 256, OnChange: func(_ string, _, _ int, why string) {
			mu.Lock()
			run.Reasons[why]++
			mu.Unlock()
		}}
	}
	var hung, hungAll atomic.Int64
	// serve is the supplier's side of a call, record the caller's.
	serve := func(cctx context.Context) error {
		t0 := time.Since(sup.start)
		if s.HangAt > 0 && t0 >= s.HangAt {
			hungAll.Add(1)
			mu.Lock()
			if run.FirstOpen == 0 {
				hung.Add(1)
			}
			mu.Unlock()
		}
		return sup.call(cctx)
	}
	// A success counts in the second it ended in; one that ends once the
	// run is over (the calls still in flight when the arrivals stop) is
	// left out, as are its seconds.
	record := func(t0 time.Duration, err error) {
		if t1 := time.Since(sup.start); err == nil && t1-t0 <= good && t1 < s.Duration {
			mu.Lock()
			run.PerSecond[int(t1/time.Second)]++
			mu.Unlock()
		}
	}
	fn := func(cctx context.Context) (struct{}, error) {
		t0 := time.Since(sup.start)
		err := serve(cctx)
		record(t0, err)
		return struct{}{}, err
	}
	var (
		submit  func()
		stats   func() (int, uint64)
		closeFn func() error
	)
	switch {
	case z.Limiter != nil:
		lsubmit, lstats, wait := z.Limiter(ctx)
		submit = func() { lsubmit(func(cctx context.Context) error { _, err := fn(cctx); return err }) }
		stats, closeFn = lstats, func() error { wait(); return nil }
	case z.Loopback:
		var err error
		submit, stats, closeFn, err = loopbackCaller(ctx, cfg, serve, func() time.Duration { return time.Since(sup.start) }, record)
		if err != nil {
			return run, err
		}
	default:
		ex, err := executor.New("capacity", cfg)
		if err != nil {
			return run, err
		}
		submit = func() { _, _ = executor.Submit(ctx, ex, fn) }
		stats = func() (int, uint64) { st := ex.Stats(); return st.Slots, st.Rejected.Busy }
		closeFn = func() error { return ex.Close(context.Background()) }
	}
	rng := rand.New(rand.NewPCG(s.Seed, 7))
	next := capSample
	for now := time.Duration(0); now < s.Duration && ctx.Err() == nil; now = time.Since(sup.start) {
		if now >= next {
			next += capSample
			l, _ := stats()
			run.Limits = append(run.Limits, l)
		}
		if s.HangAt > 0 && run.LimitAtHang == 0 && now >= s.HangAt {
			run.LimitAtHang, _ = stats()
		}
		for range poisson(rng, s.Rate(now)*capTick.Seconds()) {
			submit()
		}
		time.Sleep(capTick)
	}
	_, run.Refused = stats()
	err := closeFn()
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, n := range run.PerSecond {
		total += n
	}
	run.Goodput = float64(total) / s.Duration.Seconds()
	run.HungCalls, run.HungAll = int(hung.Load()), int(hungAll.Load())
	return run, err
}

// poisson draws a Poisson count of mean m (Knuth's method; m is small).
func poisson(rng *rand.Rand, m float64) int {
	l, k, p := math.Exp(-m), 0, 1.0
	for {
		if p *= rng.Float64(); p <= l {
			return k
		}
		k++
	}
}
