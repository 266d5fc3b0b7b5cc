package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/fusebox-go/fusebox/loadtest"
)

const aboutExhaustion = `A shop with -workers request workers serves catalog requests (never touch the
supplier) and payment requests (call it). The supplier answers in
-supplier-latency, and hangs from -outage-start to -outage-end. The same traffic
runs once per mode:
  timeout  the payment call has its invocation timeout only
  breaker  + a consecutive-failure breaker, no bulkhead
  fusebox  the executor: a bulkhead of -bulkhead slots whose saturation trips the breaker
The reset timeout must exceed the invocation timeout (+ queue timeout): the
executor refuses anything shorter, so that a half-open probe finds a free slot.`

func runExhaustion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := loadtest.DefaultExhaustion()
	var c common
	var modes string
	var timeline bool
	fs := newFlagSet("exhaustion", aboutExhaustion, stderr)
	c.register(fs, 10)
	fs.StringVar(&modes, "modes", "timeout,breaker,fusebox", "comma-separated modes to run, in this order")
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "shop request workers")
	fs.Float64Var(&cfg.CatalogRate, "catalog-rate", cfg.CatalogRate, "catalog requests per second")
	fs.DurationVar(&cfg.CatalogLatency, "catalog-latency", cfg.CatalogLatency, "work a catalog request does on its worker")
	fs.Float64Var(&cfg.PaymentRate, "payment-rate", cfg.PaymentRate, "payment requests per second")
	fs.DurationVar(&cfg.SupplierLatency, "supplier-latency", cfg.SupplierLatency, "the healthy supplier's answer time")
	fs.DurationVar(&cfg.OutageStart, "outage-start", cfg.OutageStart, "the supplier hangs from this time ...")
	fs.DurationVar(&cfg.OutageEnd, "outage-end", cfg.OutageEnd, "... to this one")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of each mode's run")
	fs.DurationVar(&cfg.InvocationTimeout, "timeout", cfg.InvocationTimeout, "invocation timeout of the payment call")
	fs.IntVar(&cfg.Threshold, "threshold", cfg.Threshold, "breaker: consecutive failures that trip it")
	fs.DurationVar(&cfg.ResetTimeout, "reset-timeout", cfg.ResetTimeout, "breaker: open period before a half-open probe (must exceed -timeout)")
	fs.IntVar(&cfg.Bulkhead, "bulkhead", cfg.Bulkhead, "fusebox: slots for payment calls")
	fs.IntVar(&cfg.Queue, "queue", cfg.Queue, "fusebox: places to wait for a slot (0: none; saturation trips at once)")
	fs.DurationVar(&cfg.QueueTimeout, "queue-timeout", cfg.QueueTimeout, "fusebox: bound on the wait in the queue (0: -timeout)")
	fs.Float64Var(&cfg.BusinessErrors, "business-errors", cfg.BusinessErrors, "share of healthy payments the supplier declines (0 to 1), at random")
	fs.BoolVar(&cfg.BusinessErrorsEven, "business-errors-even", cfg.BusinessErrorsEven, "decline exactly every 1/business-errors-th payment instead of at random")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the random business errors")
	fs.BoolVar(&cfg.BusinessErrorsFail, "business-errors-fail", cfg.BusinessErrorsFail, "count declined payments as breaker failures (default: as successes)")
	fs.BoolVar(&timeline, "timeline", false, "also print every mode's per-second timeline")
	var dash string
	fs.StringVar(&dash, "dashboard", "", "serve the live dashboard of the fusebox mode on this loopback address (e.g. 127.0.0.1:8080) and keep it up after the run until Ctrl-C")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkFormat(c.format); err != nil {
		return err
	}
	var ms []loadtest.Mode
	for _, s := range strings.Split(modes, ",") {
		m, err := loadtest.ParseMode(strings.TrimSpace(s))
		if err != nil {
			return usageError{err}
		}
		ms = append(ms, m)
	}
	t, err := loadtest.ParseTransport(c.transport)
	if err != nil {
		return usageError{err}
	}
	cfg.Transport, cfg.Speed, cfg.ProgressEvery, cfg.Progress = t, c.speed, c.progress, c.reporter(stderr)
	if t == loadtest.InProcess && c.speed == 1 {
		fmt.Fprintln(stderr, "note: inproc at speed 1 runs in real time; use -speed to compress it")
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	var d *liveDashboard
	if dash != "" {
		if d, err = startDashboard(dash); err != nil {
			return err
		}
		defer d.stop()
		cfg.OnExecutor = d.show
		fmt.Fprintf(stderr, "dashboard: open %s (the fusebox mode shows there)\n", d.url)
	}
	wall := float64(len(ms)) * cfg.Duration.Seconds() / cfg.Speed
	fmt.Fprintf(stderr, "running %d modes × %g s of scenario time at speed %g over %s: about %.0f s\n",
		len(ms), cfg.Duration.Seconds(), cfg.Speed, t, wall)
	rep, err := loadtest.RunExhaustion(ctx, cfg, ms...)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if timeline {
		if err := rep.WriteTimeline(stdout); err != nil {
			return err
		}
	}
	if err := outputs(stdout, c.out, "exhaustion", c.format, rep.WriteJSON, rep.SaveChart); err != nil {
		return err
	}
	if d != nil {
		d.linger(ctx, stderr)
	}
	return nil
}

const aboutQueue = `Calls go into the executor's bounded queue at -arrival-rate; the supplier
drains it at -service-rate. When the queue is full the breaker opens; it closes
again once successful calls have drained the queue to the low-water mark. The
same traffic runs twice: with -low-water, and without a low-water mark
(LowWater = queue-1: closed again as soon as one call has left the queue).`

func runQueue(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := loadtest.DefaultQueue()
	var c common
	fs := newFlagSet("queue", aboutQueue, stderr)
	c.register(fs, 40)
	fs.IntVar(&cfg.Queue, "queue", cfg.Queue, "places in the queue")
	fs.IntVar(&cfg.LowWater, "low-water", cfg.LowWater, "queue level at which a breaker opened on a full queue closes again (0: half of -queue)")
	fs.Float64Var(&cfg.ArrivalRate, "arrival-rate", cfg.ArrivalRate, "calls per second into the queue")
	fs.Float64Var(&cfg.ServiceRate, "service-rate", cfg.ServiceRate, "calls per second the supplier completes")
	fs.IntVar(&cfg.SupplierSlots, "supplier-workers", cfg.SupplierSlots, "calls the supplier runs at once (executor Slots)")
	fs.DurationVar(&cfg.InvocationTimeout, "timeout", cfg.InvocationTimeout, "invocation timeout of one call")
	fs.DurationVar(&cfg.QueueTimeout, "queue-timeout", cfg.QueueTimeout, "bound on the wait in the queue")
	fs.DurationVar(&cfg.ResetTimeout, "reset-timeout", cfg.ResetTimeout, "breaker: open period before a probe (must exceed -timeout + -queue-timeout)")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of each variant's run")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkFormat(c.format); err != nil {
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
	fmt.Fprintf(stderr, "running 2 variants × %g s of scenario time at speed %g over %s: about %.0f s\n",
		cfg.Duration.Seconds(), cfg.Speed, t, 2*cfg.Duration.Seconds()/cfg.Speed)
	rep, err := loadtest.RunQueue(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	return outputs(stdout, c.out, "queue", c.format, rep.WriteJSON, rep.SaveChart)
}
