package loadtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// QueueConfig describes the second scenario: an asynchronous supplier behind
// a bounded queue (the executor's queue mode), fed faster than it drains.
// All durations are scenario time. Start from DefaultQueue.
type QueueConfig struct {
	Queue         int     // places in the queue
	LowWater      int     // the queue level at which a breaker opened on a full queue closes; 0 means Queue/2
	ArrivalRate   float64 // calls per second into the queue, evenly spaced
	ServiceRate   float64 // calls per second the supplier completes
	SupplierSlots int     // calls the supplier runs at once (executor Slots); each takes SupplierSlots/ServiceRate

	InvocationTimeout time.Duration // bound on one call once it runs
	QueueTimeout      time.Duration // bound on the wait in the queue
	ResetTimeout      time.Duration // must exceed InvocationTimeout + QueueTimeout (executor.New's rule)
	Duration          time.Duration // length of each variant's run

	Transport     Transport
	Speed         float64        // scenario seconds per wall second (≥ 1); 1 under testing/synctest
	ProgressEvery time.Duration  // wall time between Progress calls
	Progress      func(Progress) // nil: no progress
}

// DefaultQueue returns the queue story of docs/design.md: a queue of 1000 fed at
// 10/s and drained at 8/s fills in about 500 s. The queue timeout (150 s)
// exceeds the longest wait in a full queue (1000 / 8/s = 125 s), so nothing
// times out while the supplier keeps up its rate; the reset timeout (200 s)
// exceeds invocation + queue timeout, as executor.New requires. The run lasts
// 1000 s: two trips with the low-water mark.
func DefaultQueue() QueueConfig {
	return QueueConfig{
		Queue:             1000,
		ArrivalRate:       10,
		ServiceRate:       8,
		SupplierSlots:     1,
		InvocationTimeout: 30 * time.Second,
		QueueTimeout:      150 * time.Second,
		ResetTimeout:      200 * time.Second,
		Duration:          1000 * time.Second,
		Transport:         InProcess,
		Speed:             1,
		ProgressEvery:     3 * time.Second,
	}
}

// Validate reports every invalid field, including what executor.New refuses
// (such as a reset timeout too short to guarantee a half-open probe a slot).
func (c QueueConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("loadtest: "+format, args...)) }
	if c.Queue < 2 {
		bad("Queue must be ≥ 2, got %d", c.Queue)
	}
	if c.LowWater < 0 || c.LowWater >= c.Queue {
		bad("LowWater must be in [0, Queue), got %d", c.LowWater)
	}
	errs = append(errs, checkRate("ArrivalRate", c.ArrivalRate, c.Duration))
	if !(c.ServiceRate > 0) || math.IsInf(c.ServiceRate, 0) {
		bad("ServiceRate must be > 0, got %v", c.ServiceRate)
	}
	if c.SupplierSlots < 1 {
		bad("SupplierSlots must be ≥ 1, got %d", c.SupplierSlots)
	}
	if c.Duration < time.Second {
		bad("Duration must be ≥ 1s, got %v", c.Duration)
	}
	errs = append(errs, checkTransport(c.Transport, c.Speed))
	if errors.Join(errs...) == nil {
		errs = append(errs, checkExecutor("supplier", c.executorConfig(clock{speed: 1}, c.lowWater(), nil)))
	}
	return errors.Join(errs...)
}

// executorConfig is the executor of a variant with the low-water mark lw, its
// durations converted to wall time by clk.
func (c QueueConfig) executorConfig(clk clock, lw int, onTransition func(breaker.Event)) executor.Config {
	return executor.Config{
		Slots:             c.SupplierSlots,
		Queue:             c.Queue,
		QueueTimeout:      clk.wall(c.QueueTimeout),
		LowWater:          lw,
		InvocationTimeout: clk.wall(c.InvocationTimeout),
		Breaker:           breaker.Config{ResetTimeout: clk.wall(c.ResetTimeout), OnTransition: onTransition},
		Stuck:             stuckConfig(clk, false),
	}
}

// lowWater resolves LowWater.
func (c QueueConfig) lowWater() int {
	if c.LowWater == 0 {
		return c.Queue / 2
	}
	return c.LowWater
}

// serviceTime is how long the supplier takes for one call.
func (c QueueConfig) serviceTime() time.Duration {
	return time.Duration(float64(c.SupplierSlots) / c.ServiceRate * float64(time.Second))
}

// RunQueue runs the queue scenario twice on identical traffic: with the
// low-water mark, and without one (LowWater = Queue−1: the breaker closes as
// soon as one call has left a full queue).
func RunQueue(ctx context.Context, cfg QueueConfig) (*QueueReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	rep := &QueueReport{Config: cfg.settings(), cfg: cfg}
	lw := cfg.lowWater()
	for _, v := range []struct {
		name string
		lw   int
	}{
		{fmt.Sprintf("low-water %d", lw), lw},
		{fmt.Sprintf("no low-water (%d)", cfg.Queue-1), cfg.Queue - 1},
	} {
		run, err := runQueueVariant(ctx, cfg, v.name, v.lw)
		if err != nil {
			return nil, fmt.Errorf("loadtest: %s: %w", v.name, err)
		}
		rep.Runs = append(rep.Runs, run)
	}
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

func runQueueVariant(ctx context.Context, cfg QueueConfig, name string, lowWater int) (QueueRun, error) {
	clk := newClock(cfg.Speed)
	rec := newQueueRecorder(clk, cfg.Duration)
	sup := newPacedSupplier(clk, cfg.SupplierSlots, cfg.serviceTime())
	charge := sup.charge
	if cfg.Transport == HTTP {
		url, client, done, err := overHTTP(sup)
		if err != nil {
			return QueueRun{}, err
		}
		defer done() // after the executor is closed
		charge = chargeOverHTTP(client, url+"/charge")
	}
	ex, err := executor.New("supplier", cfg.executorConfig(clk, lowWater, rec.transition))
	if err != nil {
		return QueueRun{}, err
	}
	call := func(ctx context.Context) (struct{}, error) { return struct{}{}, charge(ctx) }

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	arrive := func() {
		at := clk.now()
		f, err := executor.Submit(runCtx, ex, call)
		rec.queued(at, ex.Stats().Queued)
		if err != nil {
			rec.refused(at, err)
			return
		}
		rec.accepted(at)
		wg.Go(func() {
			_, err := f.Await(runCtx)
			rec.done(at, clk.now(), err, runCtx.Err() != nil)
		})
	}
	wg.Go(func() { generate(runCtx, clk, 0, every(cfg.ArrivalRate), cfg.Duration, arrive, rec.skip) })
	sample := func(t time.Duration) { rec.queued(t, ex.Stats().Queued) }
	line := func(time.Duration) string {
		st := ex.Stats()
		return fmt.Sprintf("queue %4d/%d  breaker %s", st.Queued, st.QueueCap, st.Breaker.State)
	}
	err = drive(runCtx, clk, cfg.Duration, name, cfg.ProgressEvery, cfg.Progress, sample, line)
	stop()
	wg.Wait()
	closeCtx, cancel := context.WithTimeout(context.Background(), clk.wall(cfg.InvocationTimeout)+5*time.Second)
	defer cancel()
	if cerr := ex.Close(closeCtx); cerr != nil && err == nil {
		err = fmt.Errorf("closing the executor: %w", cerr)
	}
	if err != nil {
		return QueueRun{}, err
	}
	return summarizeQueue(name, lowWater, rec), nil
}

// rejection classifies a refused Submit.
func rejection(err error) int {
	var rej *executor.RejectedError
	if errors.As(err, &rej) && rej.Reason == executor.RejectedQueueFull {
		return rejectedFull
	}
	if errors.As(err, &rej) && rej.Reason == executor.RejectedBusy {
		return rejectedBusy
	}
	if errors.Is(err, breaker.ErrOpen) {
		return rejectedOpen
	}
	return rejectedOther
}

const (
	rejectedOpen = iota
	rejectedFull
	rejectedOther
	rejectedBusy
	numRejected
)

// settings lists the configuration for reports, durations as text.
func (c QueueConfig) settings() map[string]any {
	return map[string]any{
		"queue": c.Queue, "low_water": c.lowWater(), "arrival_rate": c.ArrivalRate,
		"service_rate": c.ServiceRate, "supplier_slots": c.SupplierSlots,
		"invocation_timeout": c.InvocationTimeout.String(), "queue_timeout": c.QueueTimeout.String(),
		"reset_timeout": c.ResetTimeout.String(), "duration": c.Duration.String(),
		"transport": string(c.Transport), "speed": c.Speed,
	}
}
