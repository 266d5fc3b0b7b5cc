package loadtest

import (
	"context"
	"fmt"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/priority"
)

// InboundConfig describes the inbound scenario: a service with Workers
// request workers and two routes. /search waits on a supplier that answers
// in SupplierFast until SlowStart and slows down linearly to SupplierSlow
// by SlowEnd; /home answers in HomeLatency. Both get their Rate of
// requests per second, each with a ClientTimeout. At the defaults, 150
// searches a second against 100 workers held 2 s each is 3× what the
// service can serve once the supplier is slow. All durations are scenario
// time; start from DefaultInbound.
type InboundConfig struct {
	Workers       int
	SearchRate    float64
	HomeRate      float64
	SupplierFast  time.Duration
	SupplierSlow  time.Duration
	SlowStart     time.Duration
	SlowEnd       time.Duration
	HomeLatency   time.Duration
	ClientTimeout time.Duration
	Duration      time.Duration

	// With fusebox: each route's executor.
	SearchSlots   int
	HomeSlots     int
	SearchTimeout time.Duration // /search's InvocationTimeout
	ResetTimeout  time.Duration

	Transport Transport
	Speed     float64 // scenario seconds per wall second; 1 under testing/synctest
}

// DefaultInbound is the scenario of docs/inbound.md.
func DefaultInbound() InboundConfig {
	return InboundConfig{
		Workers: 100, SearchRate: 150, HomeRate: 150,
		SupplierFast: 20 * time.Millisecond, SupplierSlow: 2 * time.Second,
		SlowStart: 10 * time.Second, SlowEnd: 15 * time.Second,
		HomeLatency: 5 * time.Millisecond, ClientTimeout: time.Second, Duration: time.Minute,
		SearchSlots: 40, HomeSlots: 60, SearchTimeout: 500 * time.Millisecond, ResetTimeout: 5 * time.Second,
		Transport: InProcess, Speed: 1,
	}
}

// Validate reports the first field that makes no sense.
func (c InboundConfig) Validate() error {
	switch {
	case c.Workers < 1:
		return fmt.Errorf("loadtest: Workers must be ≥ 1, got %d", c.Workers)
	case c.SearchRate <= 0 || c.HomeRate <= 0:
		return fmt.Errorf("loadtest: SearchRate and HomeRate must be > 0, got %g and %g", c.SearchRate, c.HomeRate)
	case c.SlowEnd < c.SlowStart:
		return fmt.Errorf("loadtest: SlowEnd (%v) must not be before SlowStart (%v)", c.SlowEnd, c.SlowStart)
	case c.Duration < time.Second:
		return fmt.Errorf("loadtest: Duration must be ≥ 1s, got %v", c.Duration)
	case c.ClientTimeout <= 0:
		return fmt.Errorf("loadtest: ClientTimeout must be > 0, got %v", c.ClientTimeout)
	case c.Speed < 1:
		return fmt.Errorf("loadtest: Speed must be ≥ 1, got %g", c.Speed)
	case c.Transport != InProcess && c.Transport != HTTP:
		return fmt.Errorf("loadtest: unknown Transport %q", c.Transport)
	}
	return nil
}

// supplier returns the supplier's answer time at scenario time at.
func (c InboundConfig) supplier(at time.Duration) time.Duration {
	switch {
	case at < c.SlowStart:
		return c.SupplierFast
	case at >= c.SlowEnd:
		return c.SupplierSlow
	}
	f := float64(at-c.SlowStart) / float64(c.SlowEnd-c.SlowStart)
	return c.SupplierFast + time.Duration(f*float64(c.SupplierSlow-c.SupplierFast))
}

// InboundRun is one run of a scenario: without fusebox, or with it.
type InboundRun struct {
	Name        string        `json:"name"`
	Routes      []RouteReport `json:"routes"`
	BusyWorkers []int         `json:"busy_workers"` // the most in each second
}

// Route returns the report of the route path.
func (r InboundRun) Route(path string) RouteReport {
	for _, rr := range r.Routes {
		if rr.Path == path {
			return rr
		}
	}
	return RouteReport{}
}

// InboundReport is the outcome of RunInbound or RunPriorities.
type InboundReport struct {
	Scenario string       `json:"scenario"`
	Runs     []InboundRun `json:"runs"`
	Duration time.Duration
	Workers  int
	// The supplier's slow-down (inbound only), for the table and chart.
	SlowStart, SlowEnd         time.Duration
	SupplierFast, SupplierSlow time.Duration
}

// Run returns the run called name.
func (r *InboundReport) Run(name string) InboundRun {
	for _, run := range r.Runs {
		if run.Name == name {
			return run
		}
	}
	return InboundRun{}
}

// RunInbound plays the inbound scenario twice on identical traffic:
// "none" (the routes' handlers unprotected) and "fusebox" (each route
// behind inbound.Handler on an executor of its own).
func RunInbound(ctx context.Context, cfg InboundConfig) (*InboundReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rep := &InboundReport{Scenario: "inbound", Duration: cfg.Duration, Workers: cfg.Workers, SlowStart: cfg.SlowStart, SlowEnd: cfg.SlowEnd,
		SupplierFast: cfg.SupplierFast, SupplierSlow: cfg.SupplierSlow}
	br := breaker.Config{ResetTimeout: cfg.ResetTimeout}
	routes := []routeSpec{
		{path: "/search", rate: cfg.SearchRate, work: cfg.supplier,
			exec: executor.Config{Slots: cfg.SearchSlots, InvocationTimeout: cfg.SearchTimeout, Breaker: br}},
		{path: "/home", rate: cfg.HomeRate, work: func(time.Duration) time.Duration { return cfg.HomeLatency },
			exec: executor.Config{Slots: cfg.HomeSlots, InvocationTimeout: cfg.ClientTimeout, Breaker: breaker.Config{ResetTimeout: 2 * cfg.ClientTimeout}}},
	}
	for _, fb := range []bool{false, true} {
		e := &engine{spec: serviceSpec{workers: cfg.Workers, routes: routes, fusebox: fb, clientTimeout: cfg.ClientTimeout,
			duration: cfg.Duration, healthyUntil: cfg.SlowStart, transport: cfg.Transport, speed: cfg.Speed}}
		if err := e.run(ctx); err != nil {
			return nil, err
		}
		name := "none"
		if fb {
			name = "fusebox"
		}
		rep.Runs = append(rep.Runs, InboundRun{Name: name, Routes: e.report(), BusyWorkers: e.busy})
	}
	return rep, nil
}

// PrioritiesConfig describes the priorities scenario: one route, /api,
// whose handler works for Latency on Slots slots (with fusebox), gets 3×
// what those slots can serve, a mix of critical, default and sheddable
// requests (Mix: cycled over the requests). Its two runs differ only in
// CriticalShare: 0 ("fusebox", priorities only counted) and Share
// ("fusebox+priorities").
type PrioritiesConfig struct {
	Workers       int
	Slots         int
	Latency       time.Duration
	Rate          float64
	Mix           []priority.Priority
	Share         float64
	ClientTimeout time.Duration
	Duration      time.Duration
	Transport     Transport
	Speed         float64
}

// DefaultPriorities: 20 slots of 200 ms serve 100 requests a second; 300
// arrive, one in twenty critical, six in twenty sheddable. The critical
// share, 0.25, keeps 5 slots for critical requests: the 3 that their 15 a
// second hold on average, and a margin for the jitter of real traffic.
func DefaultPriorities() PrioritiesConfig {
	c, d, s := priority.Critical, priority.Default, priority.Sheddable
	return PrioritiesConfig{
		Workers: 100, Slots: 20, Latency: 200 * time.Millisecond, Rate: 300,
		Mix:   []priority.Priority{c, d, s, d, d, s, d, d, s, d, d, s, d, d, s, d, d, s, d, d},
		Share: 0.25, ClientTimeout: time.Second, Duration: time.Minute, Transport: InProcess, Speed: 1,
	}
}

// RunPriorities plays the priorities scenario without and with a critical
// share, on identical traffic.
func RunPriorities(ctx context.Context, cfg PrioritiesConfig) (*InboundReport, error) {
	if cfg.Slots < 1 || cfg.Rate <= 0 || cfg.Duration < time.Second || cfg.Speed < 1 || len(cfg.Mix) == 0 {
		return nil, fmt.Errorf("loadtest: PrioritiesConfig needs Slots ≥ 1, Rate > 0, Duration ≥ 1s, Speed ≥ 1 and a Mix, got %+v", cfg)
	}
	rep := &InboundReport{Scenario: "priorities", Duration: cfg.Duration, Workers: cfg.Workers}
	for _, share := range []float64{0, cfg.Share} {
		route := routeSpec{path: "/api", rate: cfg.Rate, mix: cfg.Mix,
			work: func(time.Duration) time.Duration { return cfg.Latency },
			exec: executor.Config{Slots: cfg.Slots, InvocationTimeout: cfg.ClientTimeout, CriticalShare: share,
				Breaker: breaker.Config{ResetTimeout: 2 * cfg.ClientTimeout}}}
		e := &engine{spec: serviceSpec{workers: cfg.Workers, routes: []routeSpec{route}, fusebox: true, clientTimeout: cfg.ClientTimeout,
			duration: cfg.Duration, transport: cfg.Transport, speed: cfg.Speed}}
		if err := e.run(ctx); err != nil {
			return nil, err
		}
		name := "fusebox"
		if share > 0 {
			name = "fusebox+priorities"
		}
		rep.Runs = append(rep.Runs, InboundRun{Name: name, Routes: e.report(), BusyWorkers: e.busy})
	}
	return rep, nil
}
