package compare

import (
	"context"
	"errors"
	"testing"
	"time"

	hystrix "github.com/afex/hystrix-go/hystrix"
	resbreaker "github.com/eapache/go-resiliency/breaker"
	"github.com/failsafe-go/failsafe-go"
	"github.com/sony/gobreaker/v2"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// ---- 2. Rejection while open.

// Open breakers for the rejection benchmarks, opened the way each library
// allows: fusebox Trip(Manual), failsafe-go Open(); gobreaker and
// go-resiliency have no such method and get Failures failing calls;
// hystrix-go gets failing calls until its health check opens it. The open
// period is an hour, so no probe is let through.
var hour = Settings{Slots: BenchSettings.Slots, Timeout: time.Minute, Failures: 5, Reset: time.Hour}

func openFusebox() *breaker.Breaker {
	b, err := breaker.New(breaker.Config{ConsecutiveFailures: hour.Failures, ResetTimeout: hour.Reset})
	if err != nil {
		panic(err)
	}
	b.Trip(breaker.Manual)
	return b
}

func openFuseboxExecutor() *executor.Executor {
	ex, err := executor.New("reject", executor.Config{
		Slots: hour.Slots, InvocationTimeout: hour.Timeout,
		Breaker: breaker.Config{ConsecutiveFailures: hour.Failures, ResetTimeout: hour.Reset},
	})
	if err != nil {
		panic(err)
	}
	ex.Breaker().Trip(breaker.Manual)
	return ex
}

func openGobreaker() *gobreaker.CircuitBreaker[int] {
	cb := gobreaker.NewCircuitBreaker[int](gobreakerSettings(hour))
	for range hour.Failures {
		_, _ = cb.Execute(failInt)
	}
	if cb.State() != gobreaker.StateOpen {
		panic("gobreaker did not open")
	}
	return cb
}

func openGobreakerTwoStep() *gobreaker.TwoStepCircuitBreaker[int] {
	cb := gobreaker.NewTwoStepCircuitBreaker[int](gobreakerSettings(hour))
	for range hour.Failures {
		if done, err := cb.Allow(); err == nil {
			done(errBench)
		}
	}
	if cb.State() != gobreaker.StateOpen {
		panic("gobreaker did not open")
	}
	return cb
}

func openFailsafe() failsafe.Executor[int] {
	cb := failsafeBreaker(hour)
	cb.Open()
	return failsafe.With[int](cb)
}

func openResiliency() *resbreaker.Breaker {
	br := resbreaker.New(hour.Failures, 1, hour.Reset)
	for range hour.Failures {
		_ = br.Run(failErr)
	}
	if br.GetState() != resbreaker.Open {
		panic("go-resiliency did not open")
	}
	return br
}

// OpenHystrix configures a command and fails calls until its circuit is
// open (its health is computed from metrics a goroutine collects, so it
// opens a little after the failures).
func OpenHystrix(s Settings) (string, error) {
	name := HystrixCommand("open", s)
	c, _, _ := hystrix.GetCircuit(name)
	deadline := time.Now().Add(5 * time.Second)
	for !c.IsOpen() {
		if time.Now().After(deadline) {
			return "", errors.New("hystrix circuit did not open")
		}
		_ = hystrix.Do(name, failErr, nil)
		time.Sleep(time.Millisecond)
	}
	return name, nil
}

func rejectCases() []Case {
	var cs []Case
	cs = append(cs, both("Reject", "fusebox", func(b *testing.B) {
		br := openFusebox()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := br.Allow(); err == nil {
				fail(b, "admitted")
			}
		}
	}, func(b *testing.B) {
		br := openFusebox()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := br.Allow(); err == nil {
					fail(b, "admitted")
				}
			}
		})
	})...)
	cs = append(cs, both("Reject", "fusebox-executor", func(b *testing.B) {
		ex := openFuseboxExecutor()
		defer ex.Close(context.Background())
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := executor.Submit(ctx, ex, okCtx); err == nil {
				fail(b, "admitted")
			}
		}
	}, func(b *testing.B) {
		ex := openFuseboxExecutor()
		defer ex.Close(context.Background())
		ctx := context.Background()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := executor.Submit(ctx, ex, okCtx); err == nil {
					fail(b, "admitted")
				}
			}
		})
	})...)
	cs = append(cs, both("Reject", "gobreaker", func(b *testing.B) {
		cb := openGobreaker()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Execute(okInt); err == nil {
				fail(b, "admitted")
			}
		}
	}, func(b *testing.B) {
		cb := openGobreaker()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := cb.Execute(okInt); err == nil {
					fail(b, "admitted")
				}
			}
		})
	})...)
	cs = append(cs, both("Reject", "gobreaker-twostep", func(b *testing.B) {
		cb := openGobreakerTwoStep()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Allow(); err == nil {
				fail(b, "admitted")
			}
		}
	}, func(b *testing.B) {
		cb := openGobreakerTwoStep()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := cb.Allow(); err == nil {
					fail(b, "admitted")
				}
			}
		})
	})...)
	cs = append(cs, both("Reject", "failsafe-go", func(b *testing.B) {
		ex := openFailsafe()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ex.Get(okInt); err == nil {
				fail(b, "admitted")
			}
		}
	}, func(b *testing.B) {
		ex := openFailsafe()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := ex.Get(okInt); err == nil {
					fail(b, "admitted")
				}
			}
		})
	})...)
	cs = append(cs, both("Reject", "failsafe-go-permit", func(b *testing.B) {
		cb := failsafeBreaker(hour)
		cb.Open()
		b.ReportAllocs()
		for b.Loop() {
			if cb.TryAcquirePermit() {
				fail(b, "admitted")
			}
		}
	}, func(b *testing.B) {
		cb := failsafeBreaker(hour)
		cb.Open()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if cb.TryAcquirePermit() {
					fail(b, "admitted")
				}
			}
		})
	})...)
	openH := func(b *testing.B) string {
		name, err := OpenHystrix(hour)
		if err != nil {
			fail(b, err)
		}
		return name
	}
	cs = append(cs, both("Reject", "hystrix-go", func(b *testing.B) {
		name := openH(b)
		b.ReportAllocs()
		for b.Loop() {
			if err := hystrix.Do(name, okErr, nil); err == nil {
				fail(b, "admitted")
			}
		}
	}, func(b *testing.B) {
		name := openH(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := hystrix.Do(name, okErr, nil); err == nil {
					fail(b, "admitted")
				}
			}
		})
	})...)
	cs = append(cs, both("Reject", "go-resiliency", func(b *testing.B) {
		br := openResiliency()
		b.ReportAllocs()
		for b.Loop() {
			if err := br.Run(okErr); err == nil {
				fail(b, "admitted")
			}
		}
	}, func(b *testing.B) {
		br := openResiliency()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := br.Run(okErr); err == nil {
					fail(b, "admitted")
				}
			}
		})
	})...)
	return append(cs, peerCases("Reject")...)
}
