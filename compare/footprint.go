package compare

import (
	"context"
	"fmt"
	"runtime"
	"time"

	hystrix "github.com/afex/hystrix-go/hystrix"
	resbreaker "github.com/eapache/go-resiliency/breaker"
	"github.com/failsafe-go/failsafe-go"
	"github.com/panjf2000/ants/v2"
	"github.com/sony/gobreaker/v2"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// FootprintResult is the idle cost of one supplier, averaged over N: right
// after it was set up (Created), and after one call each, once the call's
// own goroutines have ended (Used).
type FootprintResult struct {
	Lib string
	N   int
	// Per supplier: heap bytes, goroutine stack bytes, goroutines.
	CreatedHeap, CreatedStack, CreatedGoroutines float64
	UsedHeap, UsedStack, UsedGoroutines          float64
}

// FootLib sets up suppliers of one library for Footprint.
type FootLib struct {
	Name string
	// Ref is the fusebox row its ratios are taken against.
	Ref string
	// Leaks: what it sets up cannot be torn down (hystrix-go's global
	// commands); measure it last.
	Leaks bool
	Run   func(n int, names []string, measure func(stage int)) error
}

// footprint is the generic driver: create n suppliers, measure, call each
// once, measure, tear down. Only what create and call allocate is counted:
// the slice that holds the suppliers exists before the first reading.
func footprint[T any](create func(name string) (T, error), call func(T) error, teardown func(T)) func(int, []string, func(int)) error {
	return func(n int, names []string, measure func(int)) error {
		all := make([]T, n)
		measure(0)
		for i := range all {
			v, err := create(names[i])
			if err != nil {
				return err
			}
			all[i] = v
		}
		measure(1)
		for _, v := range all {
			if err := call(v); err != nil {
				return err
			}
		}
		measure(2)
		if teardown != nil {
			for _, v := range all {
				teardown(v)
			}
		}
		runtime.KeepAlive(all)
		return nil
	}
}

// FootLibs lists the libraries of the footprint measurement, hystrix-go
// last because its commands never go away.
func FootLibs() []FootLib {
	s := BenchSettings
	s.Slots = 10
	ctx := context.Background()
	fbConfig := executor.Config{
		Slots: s.Slots, InvocationTimeout: s.Timeout,
		Breaker: breaker.Config{ConsecutiveFailures: s.Failures, ResetTimeout: s.Reset},
	}
	var group *executor.Group
	return []FootLib{
		{Name: "fusebox-breaker", Ref: "fusebox-breaker", Run: footprint(
			func(string) (*breaker.Breaker, error) {
				return breaker.New(fbConfig.Breaker)
			},
			func(b *breaker.Breaker) error {
				p, err := b.Allow()
				p.Done(err)
				return err
			}, nil)},
		{Name: "fusebox (Group)", Ref: "fusebox (Group)", Run: footprint(
			func(name string) (*executor.Executor, error) {
				if group == nil {
					g, err := executor.NewGroup(executor.GroupConfig{Default: fbConfig})
					if err != nil {
						return nil, err
					}
					group = g
				}
				return group.Executor(name)
			},
			func(ex *executor.Executor) error {
				_, err := executor.Do(ctx, ex, okCtx)
				return err
			},
			func(*executor.Executor) {
				if group != nil {
					_ = group.Close(ctx)
					group = nil
				}
			})},
		{Name: "fusebox (standalone)", Ref: "fusebox (Group)", Run: footprint(
			func(name string) (*executor.Executor, error) { return executor.New(name, fbConfig) },
			func(ex *executor.Executor) error {
				_, err := executor.Do(ctx, ex, okCtx)
				return err
			},
			func(ex *executor.Executor) { _ = ex.Close(ctx) })},
		{Name: "gobreaker", Ref: "fusebox-breaker", Run: footprint(
			func(name string) (*gobreaker.CircuitBreaker[int], error) {
				st := gobreakerSettings(s)
				st.Name = name
				return gobreaker.NewCircuitBreaker[int](st), nil
			},
			func(cb *gobreaker.CircuitBreaker[int]) error { _, err := cb.Execute(okInt); return err },
			nil)},
		{Name: "failsafe-go (breaker)", Ref: "fusebox-breaker", Run: footprint(
			func(string) (failsafe.Executor[int], error) { return failsafe.With[int](failsafeBreaker(s)), nil },
			func(ex failsafe.Executor[int]) error { _, err := ex.Get(okInt); return err },
			nil)},
		{Name: "failsafe-go (breaker+bulkhead+timeout)", Ref: "fusebox (Group)", Run: footprint(
			func(string) (failsafe.Executor[int], error) { return newFailsafeExecutor(s), nil },
			func(ex failsafe.Executor[int]) error {
				_, err := ex.GetWithExecution(func(e failsafe.Execution[int]) (int, error) { return okCtx(e.Context()) })
				return err
			},
			nil)},
		{Name: "go-resiliency", Ref: "fusebox-breaker", Run: footprint(
			func(string) (*resbreaker.Breaker, error) { return resbreaker.New(s.Failures, 1, s.Reset), nil },
			func(b *resbreaker.Breaker) error { return b.Run(okErr) },
			nil)},
		{Name: "ants (pool per supplier)", Ref: "fusebox (Group)", Run: footprint(
			func(string) (*ants.Pool, error) { return ants.NewPool(s.Slots, ants.WithNonblocking(true)) },
			func(p *ants.Pool) error {
				ch := make(chan struct{})
				if err := p.Submit(func() { close(ch) }); err != nil {
					return err
				}
				<-ch
				return nil
			},
			func(p *ants.Pool) { p.Release() })},
		{Name: "hystrix-go", Ref: "fusebox (Group)", Leaks: true, Run: footprint(
			func(name string) (string, error) {
				hystrix.ConfigureCommand(name, hystrix.CommandConfig{
					Timeout: millis(s.Timeout), MaxConcurrentRequests: s.Slots,
					RequestVolumeThreshold: s.Failures, ErrorPercentThreshold: 50, SleepWindow: millis(s.Reset),
				})
				return name, nil
			},
			func(name string) error { return hystrix.Do(name, okErr, nil) },
			nil)},
	}
}

// Footprint measures lib with n suppliers. Before each reading the process
// is given settle for goroutines still finishing earlier work (a call's
// own timers and hand-offs, or a previous measurement's) to end.
func Footprint(lib FootLib, n int, settle time.Duration) (FootprintResult, error) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("supplier-%06d", i)
	}
	var ms [3]runtime.MemStats
	var gs [3]int
	measure := func(stage int) {
		// Let goroutines still finishing earlier work (a call's own, or a
		// previous measurement's) end before every reading.
		time.Sleep(settle)
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms[stage])
		gs[stage] = runtime.NumGoroutine()
	}
	if err := lib.Run(n, names, measure); err != nil {
		return FootprintResult{}, fmt.Errorf("%s: %w", lib.Name, err)
	}
	per := func(a, b uint64) float64 { return (float64(b) - float64(a)) / float64(n) }
	r := FootprintResult{Lib: lib.Name, N: n}
	r.CreatedHeap = per(ms[0].HeapAlloc, ms[1].HeapAlloc)
	r.CreatedStack = per(ms[0].StackInuse, ms[1].StackInuse)
	r.CreatedGoroutines = float64(gs[1]-gs[0]) / float64(n)
	r.UsedHeap = per(ms[0].HeapAlloc, ms[2].HeapAlloc)
	r.UsedStack = per(ms[0].StackInuse, ms[2].StackInuse)
	r.UsedGoroutines = float64(gs[2]-gs[0]) / float64(n)
	runtime.KeepAlive(names)
	return r, nil
}
