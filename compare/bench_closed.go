package compare

import (
	"testing"

	hystrix "github.com/afex/hystrix-go/hystrix"
	resbreaker "github.com/eapache/go-resiliency/breaker"
	"github.com/failsafe-go/failsafe-go"
	"github.com/sony/gobreaker/v2"

	"github.com/fusebox-go/fusebox/breaker"
)

// ---- 1. Closed breaker.

func closedCases() []Case {
	s := BenchSettings
	var cs []Case
	newFB := func() *breaker.Breaker {
		b, err := breaker.New(breaker.Config{ConsecutiveFailures: s.Failures, ResetTimeout: s.Reset})
		if err != nil {
			panic(err)
		}
		return b
	}
	cs = append(cs, both("Closed", "fusebox", func(b *testing.B) {
		br := newFB()
		b.ReportAllocs()
		for b.Loop() {
			p, err := br.Allow()
			if err != nil {
				fail(b, err)
			}
			p.Done(nil)
		}
	}, func(b *testing.B) {
		br := newFB()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, err := br.Allow()
				if err != nil {
					fail(b, err)
				}
				p.Done(nil)
			}
		})
	})...)
	cs = append(cs, both("Closed", "gobreaker", func(b *testing.B) {
		cb := gobreaker.NewCircuitBreaker[int](gobreakerSettings(s))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Execute(okInt); err != nil {
				fail(b, err)
			}
		}
	}, func(b *testing.B) {
		cb := gobreaker.NewCircuitBreaker[int](gobreakerSettings(s))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := cb.Execute(okInt); err != nil {
					fail(b, err)
				}
			}
		})
	})...)
	cs = append(cs, both("Closed", "gobreaker-twostep", func(b *testing.B) {
		cb := gobreaker.NewTwoStepCircuitBreaker[int](gobreakerSettings(s))
		b.ReportAllocs()
		for b.Loop() {
			done, err := cb.Allow()
			if err != nil {
				fail(b, err)
			}
			done(nil)
		}
	}, func(b *testing.B) {
		cb := gobreaker.NewTwoStepCircuitBreaker[int](gobreakerSettings(s))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				done, err := cb.Allow()
				if err != nil {
					fail(b, err)
				}
				done(nil)
			}
		})
	})...)
	cs = append(cs, both("Closed", "failsafe-go", func(b *testing.B) {
		ex := failsafe.With[int](failsafeBreaker(s))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ex.Get(okInt); err != nil {
				fail(b, err)
			}
		}
	}, func(b *testing.B) {
		ex := failsafe.With[int](failsafeBreaker(s))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := ex.Get(okInt); err != nil {
					fail(b, err)
				}
			}
		})
	})...)
	cs = append(cs, both("Closed", "failsafe-go-permit", func(b *testing.B) {
		cb := failsafeBreaker(s)
		b.ReportAllocs()
		for b.Loop() {
			if !cb.TryAcquirePermit() {
				fail(b, "refused")
			}
			cb.RecordSuccess()
		}
	}, func(b *testing.B) {
		cb := failsafeBreaker(s)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !cb.TryAcquirePermit() {
					fail(b, "refused")
				}
				cb.RecordSuccess()
			}
		})
	})...)
	// hystrix-go has no breaker-only API: every call goes through its
	// command (two goroutines, a ticket, a timer).
	hname := func() string { return HystrixCommand("bench-closed", s) }
	cs = append(cs, both("Closed", "hystrix-go", func(b *testing.B) {
		name := hname()
		b.ReportAllocs()
		for b.Loop() {
			if err := hystrix.Do(name, okErr, nil); err != nil {
				fail(b, err)
			}
		}
	}, func(b *testing.B) {
		name := hname()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := hystrix.Do(name, okErr, nil); err != nil {
					fail(b, err)
				}
			}
		})
	})...)
	cs = append(cs, both("Closed", "go-resiliency", func(b *testing.B) {
		br := resbreaker.New(s.Failures, 1, s.Reset)
		b.ReportAllocs()
		for b.Loop() {
			if err := br.Run(okErr); err != nil {
				fail(b, err)
			}
		}
	}, func(b *testing.B) {
		br := resbreaker.New(s.Failures, 1, s.Reset)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := br.Run(okErr); err != nil {
					fail(b, err)
				}
			}
		})
	})...)
	return append(cs, peerCases("Closed")...)
}
