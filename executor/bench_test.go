package executor_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

func trivial(context.Context) (int, error) { return 1, nil }

var sinkDur time.Duration

// BenchmarkBaselineTimeSince is one monotonic clock read, what a rejection
// is measured against.
func BenchmarkBaselineTimeSince(b *testing.B) {
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		sinkDur = time.Since(start)
	}
}

// serialAndParallel runs op serially and with RunParallel; newCtx gives
// each goroutine its caller context (once, as a request handler has one).
func serialAndParallel(b *testing.B, newCtx func(b *testing.B) context.Context, op func(b *testing.B, ctx context.Context)) {
	b.Run("serial", func(b *testing.B) {
		ctx := newCtx(b)
		b.ReportAllocs()
		for b.Loop() {
			op(b, ctx)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := newCtx(b)
			for pb.Next() {
				op(b, ctx)
			}
		})
	})
}

func background(*testing.B) context.Context { return context.Background() }

// cancellable is the usual caller context in a server: a request's
// context, which can be cancelled.
func cancellable(b *testing.B) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	return ctx
}

func submitAwait(ex *executor.Executor, fn func(context.Context) (int, error)) func(b *testing.B, ctx context.Context) {
	return func(b *testing.B, ctx context.Context) {
		f, err := executor.Submit(ctx, ex, fn)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Await(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// goChan and goTimeoutChan are the baselines of every Submit+Await figure,
// with the same caller context: a bare go statement with a channel, and
// the same with the per-call deadline a careful user adds by hand.
func goChan(b *testing.B, ctx context.Context) {
	ch := make(chan int, 1)
	go func() { v, _ := trivial(ctx); ch <- v }()
	<-ch
}

func goTimeoutChan(b *testing.B, ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	ch := make(chan int, 1)
	go func() { v, _ := trivial(ctx); ch <- v }()
	<-ch
	cancel()
}

// BenchmarkCall puts fusebox's Submit+Await of a trivial function beside
// its two baselines, with a caller context that never ends (Background)
// and with a cancellable one; "value" is a function that reads one value
// from its context, as logging and tracing code does.
func BenchmarkCall(b *testing.B) {
	ex, err := executor.New("bench", executor.Config{Slots: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer ex.Close(context.Background())
	readValue := func(ctx context.Context) (int, error) {
		if ctx.Value(benchKey{}) != nil {
			return 0, nil
		}
		return 1, nil
	}
	for _, c := range []struct {
		name   string
		newCtx func(*testing.B) context.Context
	}{{"background", background}, {"cancellable", cancellable}} {
		b.Run(c.name+"/go+chan", func(b *testing.B) { serialAndParallel(b, c.newCtx, goChan) })
		b.Run(c.name+"/go+timeout+chan", func(b *testing.B) { serialAndParallel(b, c.newCtx, goTimeoutChan) })
		b.Run(c.name+"/fusebox", func(b *testing.B) { serialAndParallel(b, c.newCtx, submitAwait(ex, trivial)) })
		b.Run(c.name+"/fusebox+value", func(b *testing.B) { serialAndParallel(b, c.newCtx, submitAwait(ex, readValue)) })
	}
}

type benchKey struct{}

// liveHeap keeps about 64 MiB of small linked objects alive, so that the
// collector has real marking work, as in a server with a warm cache.
func liveHeap() []*node64 {
	const n = 1 << 20
	all := make([]*node64, n)
	for i := range all {
		all[i] = &node64{}
		if i > 0 {
			all[i].next = all[i-1]
		}
	}
	return all
}

type node64 struct {
	next *node64
	_    [56]byte // the size of a small cached object
}

// BenchmarkCallLiveHeap is BenchmarkCall's background case with a
// realistic live heap: with a tiny heap, the figures above partly measure
// how often the collector runs.
func BenchmarkCallLiveHeap(b *testing.B) {
	heap := liveHeap()
	defer runtime.KeepAlive(heap)
	ex, err := executor.New("bench", executor.Config{Slots: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer ex.Close(context.Background())
	b.Run("go+chan", func(b *testing.B) { serialAndParallel(b, background, goChan) })
	b.Run("go+timeout+chan", func(b *testing.B) { serialAndParallel(b, background, goTimeoutChan) })
	b.Run("fusebox", func(b *testing.B) { serialAndParallel(b, background, submitAwait(ex, trivial)) })
}

func BenchmarkReject(b *testing.B) {
	ctx := context.Background()
	b.Run("open", func(b *testing.B) {
		ex, _ := executor.New("bench", executor.Config{Breaker: breaker.Config{ResetTimeout: time.Hour}})
		defer ex.Close(ctx)
		ex.Breaker().Trip(breaker.Manual)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := executor.Submit(ctx, ex, trivial); err == nil {
				b.Fatal("admitted")
			}
		}
	})
	// A full bulkhead: with the default criterion its young call makes it
	// busy (the refusal reads the clock to know); with the literal rule
	// every refusal would trip, so the breaker is disabled to keep it
	// closed and measure the refusal itself.
	for _, tc := range []struct {
		name  string
		stuck executor.StuckConfig
	}{{"saturated", executor.StuckConfig{}}, {"saturated-literal", executor.StuckConfig{TripOnAnySaturation: true}}} {
		b.Run(tc.name, func(b *testing.B) {
			ex, _ := executor.New("bench", executor.Config{Slots: 1, InvocationTimeout: time.Hour, Stuck: tc.stuck,
				Breaker: breaker.Config{ResetTimeout: 2 * time.Hour}})
			release := make(chan struct{})
			defer func() { close(release); ex.Close(ctx) }()
			executor.Submit(ctx, ex, func(context.Context) (int, error) { <-release; return 0, nil })
			ex.Breaker().Disable() // keep the breaker out of the way: every call meets the full bulkhead
			b.ReportAllocs()
			for b.Loop() {
				if _, err := executor.Submit(ctx, ex, trivial); err == nil {
					b.Fatal("admitted")
				}
			}
		})
	}
}

// BenchmarkCallShadow puts a Submit+Await in shadow mode beside the same
// call in enforce mode (and the go+chan baseline), for the ≤ 5 % target:
// `make bench-shadow` prints shadow's per-round ratio to enforce.
func BenchmarkCallShadow(b *testing.B) {
	for _, mode := range []struct {
		name   string
		shadow bool
	}{{"enforce", false}, {"shadow", true}} {
		ex, err := executor.New("bench", executor.Config{Slots: 1 << 20, Shadow: mode.shadow})
		if err != nil {
			b.Fatal(err)
		}
		defer ex.Close(context.Background())
		b.Run(mode.name, func(b *testing.B) { serialAndParallel(b, background, submitAwait(ex, trivial)) })
	}
	b.Run("go+chan", func(b *testing.B) { serialAndParallel(b, background, goChan) })
}
