package loadtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// BurstConfig describes the healthy-but-bursty scenario: a supplier that
// never fails, called at about half of its bulkhead's capacity, whose
// bulkhead still fills now and then. Calls arrive at random (Poisson, from
// Seed) at Rate from the first instant on (a cold start: the executor has
// no latency history); the supplier answers after a lognormal latency; and
// every StallEvery it stalls: every answer due in the stall waits until its
// end (between StallMin and StallMax later), then they all come at once.
// All durations are scenario time.
type BurstConfig struct {
	Slots             int           // bulkhead slots
	Rate              float64       // mean arrivals per second (Poisson)
	LatencyMedian     time.Duration // the supplier's latency: lognormal with this median ...
	LatencySigma      float64       // ... and this σ of its logarithm
	StallEvery        time.Duration // a stall starts every StallEvery (the first at StallEvery/2)
	StallMin          time.Duration // and lasts between StallMin ...
	StallMax          time.Duration // ... and StallMax, uniformly at random
	Duration          time.Duration // length of each run
	InvocationTimeout time.Duration
	Threshold         int           // breaker: consecutive failures that trip it
	ResetTimeout      time.Duration // breaker: open period before a probe
	Seed              uint64        // arrivals, latencies and stalls
	// Stuck is the criterion of the first run, its durations in scenario
	// time; the zero value is the executor's default. The second run
	// always trips on any saturation.
	Stuck executor.StuckConfig

	Transport     Transport
	Speed         float64        // scenario seconds per wall second (≥ 1); 1 under testing/synctest
	ProgressEvery time.Duration  // wall time between Progress calls
	Progress      func(Progress) // nil: no progress
}

// DefaultBurst returns the scenario of the README's table: 10 slots,
// 80 calls/s, latencies lognormal with median 32 ms and σ = 1.15 (68 % of
// the calls between 10 and 100 ms; mean 62 ms, so the bulkhead's capacity
// is 160 calls/s and 80/s keeps 5 slots busy on average; p99 ≈ 0.46 s),
// a stall of 0.5–0.7 s every 30 s, for 10 minutes, with a 5 s timeout.
func DefaultBurst() BurstConfig {
	return BurstConfig{
		Slots:             10,
		Rate:              80,
		LatencyMedian:     32 * time.Millisecond,
		LatencySigma:      1.15,
		StallEvery:        30 * time.Second,
		StallMin:          500 * time.Millisecond,
		StallMax:          700 * time.Millisecond,
		Duration:          10 * time.Minute,
		InvocationTimeout: 5 * time.Second,
		Threshold:         5,
		ResetTimeout:      10 * time.Second,
		Seed:              1,
		Transport:         InProcess,
		Speed:             1,
		ProgressEvery:     3 * time.Second,
	}
}

// Validate reports every invalid field.
func (c BurstConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("loadtest: "+format, args...)) }
	if c.Slots < 1 {
		bad("Slots must be ≥ 1, got %d", c.Slots)
	}
	if c.Duration < time.Second {
		bad("Duration must be ≥ 1s, got %v", c.Duration)
	}
	errs = append(errs, checkRate("Rate", c.Rate, c.Duration))
	if c.LatencyMedian <= 0 || !(c.LatencySigma >= 0) || math.IsInf(c.LatencySigma, 0) {
		bad("the latency needs LatencyMedian > 0 and LatencySigma ≥ 0, got %v and %v", c.LatencyMedian, c.LatencySigma)
	}
	if c.StallEvery < 0 || c.StallMin < 0 || c.StallMax < c.StallMin || (c.StallEvery > 0 && c.StallMax >= c.StallEvery) {
		bad("stalls must satisfy 0 ≤ StallMin ≤ StallMax < StallEvery (0: none), got %v–%v every %v", c.StallMin, c.StallMax, c.StallEvery)
	}
	if c.InvocationTimeout <= 0 || c.ResetTimeout <= 0 || c.Threshold < 1 {
		bad("InvocationTimeout and ResetTimeout must be > 0 and Threshold ≥ 1, got %v, %v, %d", c.InvocationTimeout, c.ResetTimeout, c.Threshold)
	}
	errs = append(errs, checkTransport(c.Transport, c.Speed))
	if errors.Join(errs...) == nil {
		errs = append(errs, checkExecutor("supplier", c.executorConfig(clock{speed: 1}, false, nil)))
	}
	return errors.Join(errs...)
}

// executorConfig is the executor of a run, its durations converted to wall
// time by clk: the default stuck criterion, or the literal rule.
func (c BurstConfig) executorConfig(clk clock, literal bool, onTransition func(breaker.Event)) executor.Config {
	return executor.Config{
		Slots:             c.Slots,
		InvocationTimeout: clk.wall(c.InvocationTimeout),
		Breaker: breaker.Config{ConsecutiveFailures: c.Threshold, ResetTimeout: clk.wall(c.ResetTimeout),
			OnTransition: onTransition},
		Stuck: c.stuckConfig(clk, literal),
	}
}

// stuckConfig is the criterion of a run, in wall time.
func (c BurstConfig) stuckConfig(clk clock, literal bool) executor.StuckConfig {
	if literal || c.Stuck.TripOnAnySaturation {
		return executor.StuckConfig{TripOnAnySaturation: true}
	}
	s := stuckConfig(clk, false)
	s.Multiple, s.MaxAge = c.Stuck.Multiple, clk.wall(c.Stuck.MaxAge)
	if c.Stuck.MinAge > 0 {
		s.MinAge = clk.wall(c.Stuck.MinAge)
	}
	return s
}

// The two runs of the scenario, on identical traffic.
const (
	BurstStuck   = "stuck (default)"    // the executor's default criterion
	BurstLiteral = "trip on saturation" // StuckConfig.TripOnAnySaturation
)

// RunBurst runs the scenario twice, with the default stuck criterion and
// with the literal rule, on identical traffic. It returns early with ctx's
// error if ctx ends.
func RunBurst(ctx context.Context, cfg BurstConfig) (*BurstReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	rep := &BurstReport{Config: cfg.settings(), cfg: cfg}
	for _, literal := range []bool{false, true} {
		run, err := runBurst(ctx, cfg, literal)
		if err != nil {
			return nil, fmt.Errorf("loadtest: burst run %q: %w", run.Name, err)
		}
		rep.Runs = append(rep.Runs, run)
	}
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

// stall is one stall of the supplier, in scenario time.
type stall struct{ from, to time.Duration }

// stalls draws the scenario's stalls.
func (c BurstConfig) stalls(rng *rand.Rand) []stall {
	if c.StallEvery <= 0 {
		return nil
	}
	var out []stall
	for at := c.StallEvery / 2; at < c.Duration; at += c.StallEvery {
		d := c.StallMin + time.Duration(rng.Float64()*float64(c.StallMax-c.StallMin))
		out = append(out, stall{at, at + d})
	}
	return out
}

// stallingSupplier answers each call after the latency the load generator
// drew for it, unless the answer falls into a stall: then at the stall's
// end. Safe for concurrent use.
type stallingSupplier struct {
	clk    clock
	stalls []stall
}

// answerAt is when a call arriving at t with latency d is answered.
func (s *stallingSupplier) answerAt(t, d time.Duration) time.Duration {
	at := t + d
	for _, st := range s.stalls {
		if at >= st.from && at < st.to {
			return st.to
		}
	}
	return at
}

// charge is one call with latency d.
func (s *stallingSupplier) charge(ctx context.Context, d time.Duration) error {
	if !s.clk.sleepUntil(ctx, s.answerAt(s.clk.now(), d)) {
		return ctx.Err()
	}
	return nil
}

// ServeHTTP answers GET /call?latency=ns with 200 when the call is done.
func (s *stallingSupplier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d, err := strconv.ParseInt(r.URL.Query().Get("latency"), 10, 64)
	if err != nil {
		http.Error(w, "latency: "+err.Error(), http.StatusBadRequest)
		return
	}
	if s.charge(r.Context(), time.Duration(d)) != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// callOverHTTP is the caller's side of an HTTP stallingSupplier.
func callOverHTTP(client *http.Client, url string) func(context.Context, time.Duration) error {
	return func(ctx context.Context, d time.Duration) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/call?latency="+strconv.FormatInt(int64(d), 10), nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		drain(resp)
		if resp.StatusCode != http.StatusOK {
			return errSupplier
		}
		return nil
	}
}

// runBurst plays the scenario once.
func runBurst(ctx context.Context, cfg BurstConfig, literal bool) (BurstRun, error) {
	name := BurstStuck
	if literal {
		name = BurstLiteral
	}
	run := BurstRun{Name: name}
	clk := newClock(cfg.Speed)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xb0b))
	sup := &stallingSupplier{clk: clk, stalls: cfg.stalls(rng)}
	call := sup.charge
	if cfg.Transport == HTTP {
		url, client, done, err := overHTTP(sup)
		if err != nil {
			return run, err
		}
		defer done() // after the executor is closed
		call = callOverHTTP(client, url)
	}
	rec := &burstRecorder{clk: clk}
	ex, err := executor.New("supplier", cfg.executorConfig(clk, literal, rec.transition))
	if err != nil {
		return run, err
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() {
		// Arrivals and latencies are drawn here, in order, so that every
		// run (and the virtual and the HTTP one) sees the same traffic.
		mean := float64(time.Second) / cfg.Rate
		limit := int(cfg.Rate*cfg.Duration.Seconds()) * 2
		at := time.Duration(0)
		for range limit {
			at += time.Duration(rng.ExpFloat64() * mean)
			d := time.Duration(float64(cfg.LatencyMedian) * math.Exp(cfg.LatencySigma*rng.NormFloat64()))
			if at >= cfg.Duration || !clk.sleepUntil(runCtx, at) {
				return
			}
			if clk.now()-at > maxLag {
				rec.skip()
				continue
			}
			wg.Go(func() {
				_, err := executor.Do(runCtx, ex, func(ctx context.Context) (struct{}, error) {
					return struct{}{}, call(ctx, d)
				})
				rec.outcome(err, runCtx.Err() != nil)
			})
		}
	})
	line := func(time.Duration) string {
		st := ex.Stats()
		return fmt.Sprintf("busy %2d/%d  p99 %v  breaker %s  busy refusals %d", st.InUse, st.Slots,
			st.LatencyP99.Round(time.Millisecond), st.Breaker.State, st.Rejected.Busy)
	}
	err = drive(runCtx, clk, cfg.Duration, name, cfg.ProgressEvery, cfg.Progress, func(time.Duration) {}, line)
	stop()
	wg.Wait()
	st := ex.Stats()
	closeCtx, cancel := context.WithTimeout(context.Background(), clk.wall(cfg.InvocationTimeout)+5*time.Second)
	defer cancel()
	if cerr := ex.Close(closeCtx); cerr != nil && err == nil {
		err = fmt.Errorf("closing the executor: %w", cerr)
	}
	if err != nil {
		return run, err
	}
	return rec.summarize(name, cfg, clk, st, sup.stalls), nil
}

// settings lists the configuration for reports, durations as text.
func (c BurstConfig) settings() map[string]any {
	return map[string]any{
		"slots": c.Slots, "rate": c.Rate, "latency_median": c.LatencyMedian.String(),
		"latency_sigma": c.LatencySigma, "stall_every": c.StallEvery.String(), "stall_min": c.StallMin.String(),
		"stall_max": c.StallMax.String(), "duration": c.Duration.String(),
		"invocation_timeout": c.InvocationTimeout.String(), "threshold": c.Threshold,
		"reset_timeout": c.ResetTimeout.String(), "seed": c.Seed,
		"stuck_multiple": c.Stuck.Multiple, "stuck_min_age": c.Stuck.MinAge.String(), "stuck_max_age": c.Stuck.MaxAge.String(), "transport": string(c.Transport), "speed": c.Speed,
	}
}
