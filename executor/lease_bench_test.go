//go:build unix

package executor_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/fusebox-go/fusebox/executor"
)

// BenchmarkLease is the cost of one Lease and Done, the path of every
// fuseredis command and fusesql query, beside its baseline: the
// context.WithTimeout and cancel a careful user adds by hand around a
// call to a supplier. "watched" asks the lease's context for Done, as a
// driver that follows its context (pgx) does; "deadline" is a caller
// whose context carries a deadline of its own, "request" one with a
// context of its own for every call.
func BenchmarkLease(b *testing.B) {
	ex, err := executor.New("bench", executor.Config{Slots: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer ex.Close(context.Background())
	withDeadline := func(b *testing.B) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		b.Cleanup(cancel)
		return ctx
	}
	timeout := func(watch bool) func(b *testing.B, ctx context.Context) {
		return func(b *testing.B, ctx context.Context) {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			if watch {
				_ = ctx.Done()
			}
			cancel()
		}
	}
	lease := func(watch bool) func(b *testing.B, ctx context.Context) {
		return func(b *testing.B, ctx context.Context) {
			l, err := ex.Lease(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if watch {
				_ = l.Context().Done()
			}
			l.Done(nil)
		}
	}
	for _, c := range []struct {
		name   string
		newCtx func(*testing.B) context.Context
	}{{"background", background}, {"cancellable", cancellable}, {"deadline", withDeadline}} {
		b.Run(c.name+"/timeout", func(b *testing.B) { withCPU(b, c.newCtx, timeout(false)) })
		b.Run(c.name+"/fusebox", func(b *testing.B) { withCPU(b, c.newCtx, lease(false)) })
		b.Run(c.name+"/timeout+watched", func(b *testing.B) { withCPU(b, c.newCtx, timeout(true)) })
		b.Run(c.name+"/fusebox+watched", func(b *testing.B) { withCPU(b, c.newCtx, lease(true)) })
	}
	// "request": every call has a caller's context of its own, with a
	// deadline, as a served request has.
	perRequest := func(op func(b *testing.B, ctx context.Context)) func(b *testing.B, ctx context.Context) {
		return func(b *testing.B, ctx context.Context) {
			ctx, cancel := context.WithTimeout(ctx, time.Hour)
			op(b, ctx)
			cancel()
		}
	}
	b.Run("request/timeout+watched", func(b *testing.B) { withCPU(b, background, perRequest(timeout(true))) })
	b.Run("request/fusebox+watched", func(b *testing.B) { withCPU(b, background, perRequest(lease(true))) })
}

// withCPU is serialAndParallel with the process's CPU time per operation
// (cpu-ns/op) beside the wall time.
func withCPU(b *testing.B, newCtx func(b *testing.B) context.Context, op func(b *testing.B, ctx context.Context)) {
	report := func(b *testing.B, start time.Duration, ok bool) {
		if end, _ := cpuNow(); ok {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
	b.Run("serial", func(b *testing.B) {
		ctx := newCtx(b)
		b.ReportAllocs()
		start, ok := cpuNow()
		for b.Loop() {
			op(b, ctx)
		}
		report(b, start, ok)
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		start, ok := cpuNow()
		b.RunParallel(func(pb *testing.PB) {
			ctx := newCtx(b)
			for pb.Next() {
				op(b, ctx)
			}
		})
		report(b, start, ok)
	})
}

// cpuNow is the process's CPU time (user and system, every thread): on a
// shared machine a benchmark's CPU per operation is far steadier than its
// wall time, which counts the while other processes had the cores.
func cpuNow() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
