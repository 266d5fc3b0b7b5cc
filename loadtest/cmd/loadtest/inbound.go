package main

import (
	"context"
	"fmt"
	"io"

	"github.com/fusebox-go/fusebox/loadtest"
)

const aboutInbound = `A service with -workers request workers and two routes: /search waits on a
supplier that slows down from -supplier-fast to -supplier-slow between
-slow-start and -slow-end; /home answers in -home-latency. Each route gets its
rate of requests, each with a -client-timeout. The same traffic runs twice:
  none     the handlers unprotected
  fusebox  each route behind inbound.Handler, on an executor of its own`

func runInbound(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := loadtest.DefaultInbound()
	var c common
	fs := newFlagSet("inbound", aboutInbound, stderr)
	c.register(fs, 1)
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "service request workers")
	fs.Float64Var(&cfg.SearchRate, "search-rate", cfg.SearchRate, "/search requests per second")
	fs.Float64Var(&cfg.HomeRate, "home-rate", cfg.HomeRate, "/home requests per second")
	fs.DurationVar(&cfg.SupplierFast, "supplier-fast", cfg.SupplierFast, "the supplier's answer time until -slow-start")
	fs.DurationVar(&cfg.SupplierSlow, "supplier-slow", cfg.SupplierSlow, "its answer time from -slow-end")
	fs.DurationVar(&cfg.SlowStart, "slow-start", cfg.SlowStart, "the supplier starts slowing down here ...")
	fs.DurationVar(&cfg.SlowEnd, "slow-end", cfg.SlowEnd, "... and is at -supplier-slow from here")
	fs.DurationVar(&cfg.HomeLatency, "home-latency", cfg.HomeLatency, "/home's work")
	fs.DurationVar(&cfg.ClientTimeout, "client-timeout", cfg.ClientTimeout, "the clients give up after this")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of each run")
	fs.IntVar(&cfg.SearchSlots, "search-slots", cfg.SearchSlots, "fusebox: slots of /search")
	fs.IntVar(&cfg.HomeSlots, "home-slots", cfg.HomeSlots, "fusebox: slots of /home")
	fs.DurationVar(&cfg.SearchTimeout, "search-timeout", cfg.SearchTimeout, "fusebox: InvocationTimeout of /search")
	fs.DurationVar(&cfg.ResetTimeout, "reset-timeout", cfg.ResetTimeout, "fusebox: ResetTimeout of /search")
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
	cfg.Transport, cfg.Speed = t, c.speed
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	fmt.Fprintf(stderr, "running 2 runs × %g s of scenario time at speed %g over %s: about %.0f s\n",
		cfg.Duration.Seconds(), cfg.Speed, t, 2*cfg.Duration.Seconds()/cfg.Speed)
	rep, err := loadtest.RunInbound(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	return outputs(stdout, c.out, "inbound", c.format, rep.WriteJSON, rep.SaveChart)
}

const aboutPriorities = `One route, /api, whose handler works for -latency on -slots slots, gets -rate
requests per second (3x what the slots serve at the defaults): one in twenty
critical, six in twenty sheddable, the rest default. The same traffic runs
twice: without a critical share (priorities only counted), and with -share.`

func runPriorities(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := loadtest.DefaultPriorities()
	var c common
	fs := newFlagSet("priorities", aboutPriorities, stderr)
	c.register(fs, 1)
	fs.IntVar(&cfg.Slots, "slots", cfg.Slots, "slots of /api")
	fs.DurationVar(&cfg.Latency, "latency", cfg.Latency, "/api's work")
	fs.Float64Var(&cfg.Rate, "rate", cfg.Rate, "requests per second")
	fs.Float64Var(&cfg.Share, "share", cfg.Share, "the critical share of the second run")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of each run")
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
	cfg.Transport, cfg.Speed = t, c.speed
	fmt.Fprintf(stderr, "running 2 runs × %g s of scenario time at speed %g over %s: about %.0f s\n",
		cfg.Duration.Seconds(), cfg.Speed, t, 2*cfg.Duration.Seconds()/cfg.Speed)
	rep, err := loadtest.RunPriorities(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	return outputs(stdout, c.out, "priorities", c.format, rep.WriteJSON, rep.SaveChart)
}
