package executor_test

import (
	"context"
	"testing"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

func trivial(context.Context) (int, error) { return 1, nil }

// Baselines in the same run: a bare goroutine plus a buffered channel round
// trip (what Submit+Await is measured against) and a monotonic clock read
// (what a rejection is measured against).
func BenchmarkBaselineGoChannel(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ch := make(chan int, 1)
			go func() { v, _ := trivial(context.Background()); ch <- v }()
			<-ch
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ch := make(chan int, 1)
				go func() { v, _ := trivial(context.Background()); ch <- v }()
				<-ch
			}
		})
	})
}

// The same round trip with the per-call timeout a careful user would add
// by hand: context.WithTimeout costs more than the whole goroutine.
func BenchmarkBaselineGoChannelWithTimeout(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		ch := make(chan int, 1)
		go func() { v, _ := trivial(ctx); ch <- v }()
		<-ch
		cancel()
	}
}

var sinkDur time.Duration

func BenchmarkBaselineTimeSince(b *testing.B) {
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		sinkDur = time.Since(start)
	}
}

func BenchmarkSubmitAwait(b *testing.B) {
	ctx := context.Background()
	ex, err := executor.New("bench", executor.Config{Workers: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer ex.Close(ctx)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f, err := executor.Submit(ctx, ex, trivial)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Await(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				f, err := executor.Submit(ctx, ex, trivial)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := f.Await(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
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
			ex, _ := executor.New("bench", executor.Config{Workers: 1, InvocationTimeout: time.Hour, Stuck: tc.stuck,
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
