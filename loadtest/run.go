package loadtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/executor"
)

// RunExhaustion runs the worker-exhaustion scenario once per mode (every
// mode when none is given), one after the other, on identical traffic. It
// returns early with ctx's error if ctx ends.
func RunExhaustion(ctx context.Context, cfg ExhaustionConfig, modes ...Mode) (*ExhaustionReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(modes) == 0 {
		modes = Modes
	}
	start := time.Now()
	rep := &ExhaustionReport{Config: cfg.settings(), cfg: cfg}
	for _, m := range modes {
		mr, err := runMode(ctx, cfg, m)
		if err != nil {
			return nil, fmt.Errorf("loadtest: mode %s: %w", m, err)
		}
		rep.Modes = append(rep.Modes, mr)
	}
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

// runMode plays the scenario against one mode.
func runMode(ctx context.Context, cfg ExhaustionConfig, mode Mode) (ModeReport, error) {
	clk := newClock(cfg.Speed)
	rec := newRecorder(clk, cfg.Duration, cfg.OutageStart, cfg.OutageEnd)
	sup := &supplier{clk: clk, latency: cfg.SupplierLatency, outageStart: cfg.OutageStart,
		outageEnd: cfg.OutageEnd, declineRate: cfg.BusinessErrors}
	if !cfg.BusinessErrorsEven {
		sup.rng = rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	}

	charge := sup.charge
	if cfg.Transport == HTTP {
		url, client, done, err := overHTTP(sup)
		if err != nil {
			return ModeReport{}, err
		}
		defer done() // after the shop's, and after the executor is closed
		charge = chargeOverHTTP(client, url+"/charge")
	}
	prot, err := newProtection(mode, cfg, clk, charge, rec.transition)
	if err != nil {
		return ModeReport{}, err
	}
	sh := &shop{clk: clk, workers: int64(cfg.Workers), catalogLatency: cfg.CatalogLatency, pay: prot.pay, rec: rec}
	send := sh.serve
	if cfg.Transport == HTTP {
		url, client, done, err := overHTTP(sh)
		if err != nil {
			_ = prot.close(context.Background())
			return ModeReport{}, err
		}
		defer done()
		// No request can take longer than the payment timeout; the bound only
		// guards against a shop that stops answering.
		sc := &shopClient{client: client, url: url, bound: clk.wall(2*cfg.InvocationTimeout) + 5*time.Second}
		send = sc.send
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	request := func(k kind) func() {
		return func() {
			wg.Go(func() {
				arrived := clk.now()
				o := send(runCtx, k)
				rec.request(k, arrived, clk.now(), o)
			})
		}
	}
	skip := func(k kind) func() { return func() { rec.skip(k) } }
	// The catalog stream is offset by half its interval, so that no catalog
	// request ever arrives at the same instant as a payment: virtual-time
	// results do not depend on which goroutine the scheduler runs first.
	catalogEvery := every(cfg.CatalogRate)
	wg.Go(func() {
		generate(runCtx, clk, catalogEvery/2, catalogEvery, cfg.Duration, request(kindCatalog), skip(kindCatalog))
	})
	wg.Go(func() {
		generate(runCtx, clk, 0, every(cfg.PaymentRate), cfg.Duration, request(kindPayment), skip(kindPayment))
	})

	sample := func(t time.Duration) {
		rec.busy(t, int(sh.busy.Load()))
	}
	progress := func(t time.Duration) string {
		line := fmt.Sprintf("busy %3d/%d", sh.busy.Load(), cfg.Workers)
		if v, ok := rec.catalogShare(int(t/time.Second) - 1); ok {
			line += fmt.Sprintf("  catalog %5.1f %%", 100*v)
		}
		if prot.state != nil {
			line += "  breaker " + prot.state().String()
		}
		if sup.inOutage(t) {
			line += "  (supplier hung)"
		}
		return line
	}
	err = drive(runCtx, clk, cfg.Duration, string(mode), cfg.ProgressEvery, cfg.Progress, sample, progress)
	var refusals *executor.Rejections
	if prot.refusals != nil {
		r := prot.refusals() // at the end of the run, before what is in flight is cut off
		refusals = &r
	}

	stop() // the run is over: whatever is still in flight is cut off
	wg.Wait()
	closeCtx, cancel := context.WithTimeout(context.Background(), clk.wall(cfg.InvocationTimeout)+5*time.Second)
	defer cancel()
	if cerr := prot.close(closeCtx); cerr != nil && err == nil {
		err = fmt.Errorf("closing the executor: %w", cerr)
	}
	if err != nil {
		return ModeReport{}, err
	}
	mr := summarize(mode, prot.state != nil, rec)
	mr.Summary.Refusals = refusals
	return mr, nil
}

// every is the interval between evenly spaced events at rate per second.
func every(rate float64) time.Duration { return time.Duration(float64(time.Second) / rate) }

// maxLag is how late (scenario time) the load generator may send a request.
// On a busy machine the whole process can stall for a moment; sending every
// missed request at once afterwards would hit the shop with a burst that the
// scenario does not have (ten payments at once saturate a bulkhead of ten).
// Requests later than this are skipped and counted instead. Under
// testing/synctest nothing is ever late.
const maxLag = 250 * time.Millisecond

// generate calls fire at offset, offset+interval, ... up to (not including)
// end, at most end/interval+1 times, and skip instead for a request that
// would leave more than maxLag late. It stops early when ctx ends. fire must
// not block.
func generate(ctx context.Context, clk clock, offset, interval, end time.Duration, fire, skip func()) {
	for i := time.Duration(0); ; i++ {
		at := offset + i*interval
		if at >= end || !clk.sleepUntil(ctx, at) {
			return
		}
		if clk.now()-at > maxLag {
			skip()
			continue
		}
		fire()
	}
}

// drive is the run's own loop: at the start of every scenario second it
// calls sample, about every progressEvery of wall time it reports progress,
// and it returns at the end of the run (nil) or when ctx ends (its error).
func drive(ctx context.Context, clk clock, duration time.Duration, run string, progressEvery time.Duration,
	report func(Progress), sample func(time.Duration), line func(time.Duration) string) error {
	lastReport := time.Now()
	for t := time.Duration(0); t < duration; t += time.Second {
		if !clk.sleepUntil(ctx, t) {
			return ctx.Err()
		}
		sample(t)
		if report != nil && progressEvery > 0 && time.Since(lastReport) >= progressEvery {
			lastReport = time.Now()
			report(Progress{Run: run, At: t, Duration: duration, Line: line(t)})
		}
	}
	if !clk.sleepUntil(ctx, duration) {
		return ctx.Err()
	}
	if report != nil {
		report(Progress{Run: run, At: duration, Duration: duration, Line: "done"})
	}
	return nil
}
