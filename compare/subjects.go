package compare

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	hystrix "github.com/afex/hystrix-go/hystrix"
	sentinel "github.com/alibaba/sentinel-golang/api"
	sentinelbase "github.com/alibaba/sentinel-golang/core/base"
	sentinelcb "github.com/alibaba/sentinel-golang/core/circuitbreaker"
	sentinellog "github.com/alibaba/sentinel-golang/logging"
	resbreaker "github.com/eapache/go-resiliency/breaker"
	"github.com/failsafe-go/failsafe-go"
	fsbulkhead "github.com/failsafe-go/failsafe-go/bulkhead"
	fsbreaker "github.com/failsafe-go/failsafe-go/circuitbreaker"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"
	"github.com/panjf2000/ants/v2"
	"github.com/sony/gobreaker/v2"
	zerobreaker "github.com/zeromicro/go-zero/core/breaker"
	"github.com/zeromicro/go-zero/core/stat"

	"github.com/fusebox-go/fusebox/antspool"
	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Fn is a protected call: the supplier.
type Fn = func(context.Context) (int, error)

// Outcome is what a caller saw, in the same terms for every library.
type Outcome uint8

// The outcomes.
const (
	OK       Outcome = iota // the supplier answered with a value
	Open                    // refused by an open breaker, nothing called
	Full                    // refused by a full bulkhead or pool, nothing called
	TimedOut                // the call's timeout (or its context deadline) ended it
	Failed                  // any other error
	NumOutcomes
)

// String returns the outcome's name: "ok", "open", "full", "timeout" or "failed".
func (o Outcome) String() string {
	return [...]string{"ok", "open", "full", "timeout", "failed"}[o]
}

// Subject is one supplier protected the way a library does it: Call makes
// one call and waits for its outcome as that library's caller would.
type Subject interface {
	Call(ctx context.Context, fn Fn) (int, error)
	Classify(err error) Outcome
	Close()
}

// Lib names a library and makes its subjects.
type Lib struct {
	Name string
	// Bounded: the library keeps at most Settings.Slots calls running.
	Bounded bool
	New     func(Settings) (Subject, error)
}

// Libs returns every subject kind, fusebox first.
func Libs() []Lib {
	return []Lib{
		{"fusebox", true, newFusebox},
		{"fusebox-ants", true, newFuseboxAnts},
		{"fusebox-breaker", false, newFuseboxBreaker},
		{"gobreaker", false, newGobreaker},
		{"failsafe-go", true, newFailsafe},
		{"failsafe-go-async", true, newFailsafeAsync},
		{"hystrix-go", true, newHystrix},
		{"hystrix-go-async", true, newHystrixAsync},
		{"go-resiliency", false, newResiliency},
		{"go-zero", false, newGoZero},
		{"sentinel-golang", false, newSentinel},
		{"ants", true, newAnts},
		{"go", false, newGo},
		{"go-timeout", false, newGoTimeout},
	}
}

// LibByName returns the library called name.
func LibByName(name string) Lib {
	for _, l := range Libs() {
		if l.Name == name {
			return l
		}
	}
	panic("compare: no library " + name)
}

// classifyCtx maps the context errors every library lets through.
func classifyCtx(err error) Outcome {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, context.DeadlineExceeded):
		return TimedOut
	}
	return Failed
}

// ---- fusebox executor: Submit + Await.

type fuseboxSubject struct{ ex *executor.Executor }

func newFusebox(s Settings) (Subject, error) {
	ex, err := executor.New("compare", executor.Config{
		Slots:             s.Slots,
		InvocationTimeout: s.Timeout,
		Breaker:           breaker.Config{ConsecutiveFailures: s.Failures, ResetTimeout: s.Reset},
	})
	return fuseboxSubject{ex}, err
}

func (f fuseboxSubject) Call(ctx context.Context, fn Fn) (int, error) {
	fut, err := executor.Submit(ctx, f.ex, fn)
	if err != nil {
		return 0, err
	}
	return fut.Await(ctx)
}

func (fuseboxSubject) Classify(err error) Outcome {
	switch {
	case errors.Is(err, breaker.ErrOpen):
		return Open
	case errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy):
		return Full
	}
	return classifyCtx(err) // ErrTimeout matches context.DeadlineExceeded
}

func (f fuseboxSubject) Close() { _ = f.ex.Close(context.Background()) }

// ---- fusebox with its calls on an ants pool (the antspool adapter).

type fuseboxAntsSubject struct {
	fuseboxSubject
	g    *executor.Group
	pool *ants.Pool
}

func newFuseboxAnts(s Settings) (Subject, error) {
	// Sized well above the slots: the bulkhead bounds the supplier, the
	// pool only supplies goroutines. No purge goroutine, so that the
	// behaviour tests can run it inside a synctest bubble.
	pool, err := ants.NewPool(100*s.Slots, ants.WithNonblocking(true), ants.WithDisablePurge(true))
	if err != nil {
		return nil, err
	}
	g, err := executor.NewGroup(executor.GroupConfig{Runner: antspool.New(pool), Default: executor.Config{
		Slots:             s.Slots,
		InvocationTimeout: s.Timeout,
		Breaker:           breaker.Config{ConsecutiveFailures: s.Failures, ResetTimeout: s.Reset},
	}})
	if err != nil {
		pool.Release()
		return nil, err
	}
	ex, err := g.Executor("compare")
	return fuseboxAntsSubject{fuseboxSubject{ex}, g, pool}, err
}

func (f fuseboxAntsSubject) Close() {
	_ = f.g.Close(context.Background())
	f.pool.Release()
}

// ---- fusebox breaker alone: the caller bounds the call with a context.

type fuseboxBreakerSubject struct {
	b *breaker.Breaker
	s Settings
}

func newFuseboxBreaker(s Settings) (Subject, error) {
	b, err := breaker.New(breaker.Config{ConsecutiveFailures: s.Failures, ResetTimeout: s.Reset})
	return fuseboxBreakerSubject{b, s}, err
}

func (f fuseboxBreakerSubject) Call(ctx context.Context, fn Fn) (int, error) {
	p, err := f.b.Allow()
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.s.Timeout)
	defer cancel()
	v, err := fn(ctx)
	p.Done(err)
	return v, err
}

func (fuseboxBreakerSubject) Classify(err error) Outcome {
	if errors.Is(err, breaker.ErrOpen) {
		return Open
	}
	return classifyCtx(err)
}

func (fuseboxBreakerSubject) Close() {}

// ---- gobreaker: Execute; the caller bounds the call with a context.

type gobreakerSubject struct {
	cb *gobreaker.CircuitBreaker[int]
	s  Settings
}

func gobreakerSettings(s Settings) gobreaker.Settings {
	n := uint32(s.Failures)
	return gobreaker.Settings{
		Name:        "compare",
		MaxRequests: 1,
		Timeout:     s.Reset,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= n },
	}
}

func newGobreaker(s Settings) (Subject, error) {
	return gobreakerSubject{gobreaker.NewCircuitBreaker[int](gobreakerSettings(s)), s}, nil
}

func (g gobreakerSubject) Call(ctx context.Context, fn Fn) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, g.s.Timeout)
	defer cancel()
	return g.cb.Execute(func() (int, error) { return fn(ctx) })
}

func (gobreakerSubject) Classify(err error) Outcome {
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return Open
	}
	return classifyCtx(err)
}

func (gobreakerSubject) Close() {}

// ---- failsafe-go: circuit breaker, bulkhead and timeout, sync and async.

type failsafeSubject struct {
	ex    failsafe.Executor[int]
	async bool
}

func failsafeBreaker(s Settings) fsbreaker.CircuitBreaker[int] {
	return fsbreaker.NewBuilder[int]().
		WithFailureThreshold(uint(s.Failures)).
		WithSuccessThreshold(1).
		WithDelay(s.Reset).
		Build()
}

func newFailsafeExecutor(s Settings) failsafe.Executor[int] {
	// Outermost first: the breaker in front of the bulkhead, the timeout
	// around the call, the order fusebox uses.
	return failsafe.With[int](failsafeBreaker(s), fsbulkhead.New[int](uint(s.Slots)), fstimeout.New[int](s.Timeout))
}

func newFailsafe(s Settings) (Subject, error) {
	return failsafeSubject{ex: newFailsafeExecutor(s)}, nil
}

func newFailsafeAsync(s Settings) (Subject, error) {
	return failsafeSubject{ex: newFailsafeExecutor(s), async: true}, nil
}

func (f failsafeSubject) Call(ctx context.Context, fn Fn) (int, error) {
	ex := f.ex
	if ctx != context.Background() {
		ex = ex.WithContext(ctx) // a copy of the executor per call
	}
	call := func(e failsafe.Execution[int]) (int, error) { return fn(e.Context()) }
	if !f.async {
		return ex.GetWithExecution(call)
	}
	res := ex.GetAsyncWithExecution(call)
	select {
	case <-res.Done():
		return res.Get()
	case <-ctx.Done():
		res.Cancel()
		return 0, ctx.Err()
	}
}

func (failsafeSubject) Classify(err error) Outcome {
	switch {
	case errors.Is(err, fsbreaker.ErrOpen):
		return Open
	case errors.Is(err, fsbulkhead.ErrFull):
		return Full
	case errors.Is(err, fstimeout.ErrExceeded):
		return TimedOut
	}
	return classifyCtx(err)
}

func (failsafeSubject) Close() {}

// ---- hystrix-go: DoC, or GoC with an output channel.

// hystrix keeps its commands in package-level maps: every subject gets a
// name of its own, and its circuit (two goroutines) lives as long as the
// process.
var hystrixSeq atomic.Int64

// HystrixCommand configures a fresh hystrix command from s and returns its name.
func HystrixCommand(prefix string, s Settings) string {
	name := fmt.Sprintf("%s-%d", prefix, hystrixSeq.Add(1))
	hystrix.ConfigureCommand(name, hystrix.CommandConfig{
		Timeout:                millis(s.Timeout),
		MaxConcurrentRequests:  s.Slots,
		RequestVolumeThreshold: s.Failures,
		ErrorPercentThreshold:  50,
		SleepWindow:            millis(s.Reset),
	})
	return name
}

type hystrixSubject struct {
	name  string
	async bool
}

func newHystrix(s Settings) (Subject, error) {
	return hystrixSubject{name: HystrixCommand("compare", s)}, nil
}

func newHystrixAsync(s Settings) (Subject, error) {
	return hystrixSubject{name: HystrixCommand("compare", s), async: true}, nil
}

func (h hystrixSubject) Call(ctx context.Context, fn Fn) (int, error) {
	// The value travels on a buffered channel: after a timeout hystrix has
	// returned while the function still runs, so it must not write to a
	// variable the caller reads.
	out := make(chan int, 1)
	run := func(ctx context.Context) error {
		v, err := fn(ctx)
		if err == nil {
			out <- v
		}
		return err
	}
	if !h.async {
		if err := hystrix.DoC(ctx, h.name, run, nil); err != nil {
			return 0, err
		}
		return <-out, nil
	}
	errs := hystrix.GoC(ctx, h.name, run, nil)
	select {
	case v := <-out:
		return v, nil
	case err := <-errs:
		return 0, err
	}
}

func (hystrixSubject) Classify(err error) Outcome {
	switch {
	case errors.Is(err, hystrix.ErrCircuitOpen):
		return Open
	case errors.Is(err, hystrix.ErrMaxConcurrency):
		return Full
	case errors.Is(err, hystrix.ErrTimeout):
		return TimedOut
	}
	return classifyCtx(err)
}

func (hystrixSubject) Close() {}

// ---- go-resiliency breaker: Run; the caller bounds the call with a context.

type resiliencySubject struct {
	b *resbreaker.Breaker
	s Settings
}

func newResiliency(s Settings) (Subject, error) {
	return resiliencySubject{resbreaker.New(s.Failures, 1, s.Reset), s}, nil
}

func (r resiliencySubject) Call(ctx context.Context, fn Fn) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, r.s.Timeout)
	defer cancel()
	var v int
	err := r.b.Run(func() error {
		var err error
		v, err = fn(ctx)
		return err
	})
	return v, err
}

func (resiliencySubject) Classify(err error) Outcome {
	if errors.Is(err, resbreaker.ErrBreakerOpen) {
		return Open
	}
	return classifyCtx(err)
}

func (resiliencySubject) Close() {}

// ---- go-zero's core/breaker: DoCtx; the caller bounds the call with a
// context. It has no settings: a Google SRE throttle over 10 s.

type goZeroSubject struct {
	b zerobreaker.Breaker
	s Settings
}

func newGoZero(s Settings) (Subject, error) {
	quietGoZero()
	return goZeroSubject{zerobreaker.NewBreaker(), s}, nil
}

// quietGoZero turns off the alert log go-zero writes for every refusal
// (its own tests do the same).
func quietGoZero() { stat.SetReporter(nil) }

func (g goZeroSubject) Call(ctx context.Context, fn Fn) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, g.s.Timeout)
	defer cancel()
	var v int
	err := g.b.DoCtx(ctx, func() error {
		var err error
		v, err = fn(ctx)
		return err
	})
	return v, err
}

func (goZeroSubject) Classify(err error) Outcome {
	if errors.Is(err, zerobreaker.ErrServiceUnavailable) {
		return Open
	}
	return classifyCtx(err)
}

func (goZeroSubject) Close() {}

// ---- Sentinel-golang: an Entry per call on a resource of its own with one
// circuit-breaking rule; the caller bounds the call with a context.

// Sentinel keeps its rules and statistics in package-level maps: every
// subject gets a resource of its own and removes its rule on Close.
var (
	sentinelSeq atomic.Int64
	// quietSentinel keeps Sentinel's info log (a line per rule loaded or
	// cleared) off stdout, where the report command writes its report.
	quietSentinel = sync.OnceFunc(func() { sentinellog.ResetGlobalLoggerLevel(sentinellog.WarnLevel) })
)

// SentinelRule is the circuit-breaking rule made from s: ErrorCount (5
// errors open it), the 5 s window in 10 buckets of Sentinel's examples.
func SentinelRule(resource string, s Settings) *sentinelcb.Rule {
	return &sentinelcb.Rule{
		Resource:                     resource,
		Strategy:                     sentinelcb.ErrorCount,
		RetryTimeoutMs:               uint32(millis(s.Reset)),
		MinRequestAmount:             uint64(s.Failures),
		StatIntervalMs:               5000,
		StatSlidingWindowBucketCount: 10,
		Threshold:                    float64(s.Failures),
	}
}

// SentinelResource loads a fresh rule made from s and returns its resource.
func SentinelResource(prefix string, s Settings) (string, error) {
	quietSentinel()
	res := fmt.Sprintf("%s-%d", prefix, sentinelSeq.Add(1))
	if _, err := sentinelcb.LoadRulesOfResource(res, []*sentinelcb.Rule{SentinelRule(res, s)}); err != nil {
		return "", err
	}
	return res, nil
}

type sentinelSubject struct {
	res string
	s   Settings
}

func newSentinel(s Settings) (Subject, error) {
	res, err := SentinelResource("compare", s)
	return sentinelSubject{res, s}, err
}

func (g sentinelSubject) Call(ctx context.Context, fn Fn) (int, error) {
	e, blocked := sentinel.Entry(g.res, sentinel.WithTrafficType(sentinelbase.Outbound))
	if blocked != nil {
		return 0, blocked
	}
	defer e.Exit()
	ctx, cancel := context.WithTimeout(ctx, g.s.Timeout)
	defer cancel()
	v, err := fn(ctx)
	if err != nil {
		sentinel.TraceError(e, err)
	}
	return v, err
}

func (sentinelSubject) Classify(err error) Outcome {
	var blocked *sentinelbase.BlockError
	if errors.As(err, &blocked) {
		return Open
	}
	return classifyCtx(err)
}

func (g sentinelSubject) Close() { _ = sentinelcb.ClearRulesOfResource(g.res) }

// ---- one ants pool per supplier + a channel.

type result struct {
	v   int
	err error
}

type antsSubject struct{ p *ants.Pool }

func newAnts(s Settings) (Subject, error) {
	p, err := ants.NewPool(s.Slots, ants.WithNonblocking(true))
	return antsSubject{p}, err
}

func (a antsSubject) Call(ctx context.Context, fn Fn) (int, error) {
	ch := make(chan result, 1)
	if err := a.p.Submit(func() { v, err := fn(ctx); ch <- result{v, err} }); err != nil {
		return 0, err
	}
	r := <-ch
	return r.v, r.err
}

func (antsSubject) Classify(err error) Outcome {
	if errors.Is(err, ants.ErrPoolOverload) {
		return Full
	}
	return classifyCtx(err)
}

func (a antsSubject) Close() { a.p.Release() }

// ---- a bare goroutine + a channel.

type goSubject struct{}

func newGo(Settings) (Subject, error) { return goSubject{}, nil }

func (goSubject) Call(ctx context.Context, fn Fn) (int, error) {
	ch := make(chan result, 1)
	go func() { v, err := fn(ctx); ch <- result{v, err} }()
	r := <-ch
	return r.v, r.err
}

func (goSubject) Classify(err error) Outcome { return classifyCtx(err) }
func (goSubject) Close()                     {}

// ---- a bare goroutine + context.WithTimeout + a channel: the per-call
// deadline a careful user writes by hand.

type goTimeoutSubject struct{ timeout time.Duration }

func newGoTimeout(s Settings) (Subject, error) { return goTimeoutSubject{s.Timeout}, nil }

func (g goTimeoutSubject) Call(ctx context.Context, fn Fn) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	ch := make(chan result, 1)
	go func() { v, err := fn(ctx); ch <- result{v, err} }()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (goTimeoutSubject) Classify(err error) Outcome { return classifyCtx(err) }
func (goTimeoutSubject) Close()                     {}
