package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fusebox-go/fusebox/loadtest"
)

const aboutBurst = `A healthy supplier (it never fails) behind a bulkhead of -workers slots:
calls arrive at random (Poisson) at -rate from the first instant on (a cold
start), the supplier answers after a lognormal latency (-latency-median,
-latency-sigma), and every -stall-every it stalls for -stall-min to -stall-max:
every answer due then waits until the stall ends. The same traffic runs twice:
  stuck (default)     the executor's default stuck criterion: a full bulkhead
                      trips the breaker only if half of its calls are old
                      (8 × the supplier's recent p99, within [0.5 s, timeout/2]);
                      otherwise only the call is refused (busy)
  trip on saturation  the literal rule: every full bulkhead trips
Every trip is false here: the table shows how many each rule makes.`

func runBurst(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := loadtest.DefaultBurst()
	var c common
	fs := newFlagSet("burst", aboutBurst, stderr)
	c.register(fs, 20)
	fs.IntVar(&cfg.Slots, "workers", cfg.Slots, "bulkhead slots")
	fs.Float64Var(&cfg.Rate, "rate", cfg.Rate, "mean calls per second (Poisson arrivals)")
	fs.DurationVar(&cfg.LatencyMedian, "latency-median", cfg.LatencyMedian, "median of the supplier's lognormal latency")
	fs.Float64Var(&cfg.LatencySigma, "latency-sigma", cfg.LatencySigma, "σ of the logarithm of the latency (1.15: 68 % of calls within 3.2× of the median)")
	fs.DurationVar(&cfg.StallEvery, "stall-every", cfg.StallEvery, "a supplier stall starts this often (0: none)")
	fs.DurationVar(&cfg.StallMin, "stall-min", cfg.StallMin, "shortest stall")
	fs.DurationVar(&cfg.StallMax, "stall-max", cfg.StallMax, "longest stall")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of each run")
	fs.DurationVar(&cfg.InvocationTimeout, "timeout", cfg.InvocationTimeout, "invocation timeout of one call")
	fs.DurationVar(&cfg.ResetTimeout, "reset-timeout", cfg.ResetTimeout, "breaker: open period before a probe (must exceed -timeout)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the arrivals, latencies and stalls")
	fs.Float64Var(&cfg.Stuck.Multiple, "stuck-multiple", 0, "stuck criterion: multiple of the p99 (0: the default)")
	fs.DurationVar(&cfg.Stuck.MinAge, "stuck-min-age", 0, "stuck criterion: floor of the threshold (0: the default)")
	fs.DurationVar(&cfg.Stuck.MaxAge, "stuck-max-age", 0, "stuck criterion: ceiling of the threshold (0: the default)")
	if err := parse(fs, args); err != nil {
		return err
	}
	t, err := loadtest.ParseTransport(c.transport)
	if err != nil {
		return usageError{err}
	}
	cfg.Transport, cfg.Speed, cfg.ProgressEvery, cfg.Progress = t, c.speed, c.progress, c.reporter(stderr)
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	fmt.Fprintf(stderr, "running 2 rules × %g s of scenario time at speed %g over %s: about %.0f s\n",
		cfg.Duration.Seconds(), cfg.Speed, t, 2*cfg.Duration.Seconds()/cfg.Speed)
	rep, err := loadtest.RunBurst(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(c.out, "burst.json")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nJSON:  %s\n", path)
	return nil
}
