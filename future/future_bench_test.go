package future

import (
	"context"
	"sync"
	"testing"
)

// The baseline for a round trip is what a future replaces: a goroutine that
// sends its result on a channel of capacity 1 (so that it never blocks if
// nobody receives), and a receive. The future versions do the same through
// a Promise: the goroutine completes, this goroutine awaits.

// benchSink and benchFuture keep results alive, and make futures escape to
// the heap as real ones do, so the compiler cannot drop or shrink the work.
var (
	benchSink   int
	benchFuture *Future[int]
)

func BenchmarkRoundTrip(b *testing.B) {
	ctx := context.Background()
	// call is how the executor embeds a Promise: one struct, one allocation.
	type call struct {
		Promise[int]
		n int
	}
	b.Run("baseline=go+chan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ch := make(chan int, 1)
			go func() { ch <- 1 }()
			benchSink = <-ch
		}
	})
	b.Run("go+Promise+Await", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p := new(Promise[int])
			go func() { p.Complete(1, nil) }()
			benchSink, _ = p.Future().Await(ctx)
		}
	})
	b.Run("go+embedded+Await", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := &call{n: 1}
			go func() { c.Complete(c.n, nil) }()
			benchSink, _ = c.Future().Await(ctx)
		}
	})
}

func BenchmarkRoundTripParallel(b *testing.B) {
	ctx := context.Background()
	b.Run("baseline=go+chan", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ch := make(chan int, 1)
				go func() { ch <- 1 }()
				<-ch
			}
		})
	})
	b.Run("go+Promise+Await", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p := new(Promise[int])
				go func() { p.Complete(1, nil) }()
				_, _ = p.Future().Await(ctx)
			}
		})
	})
}

// BenchmarkHandOff isolates the future from goroutine creation: one
// long-lived goroutine completes whatever it is handed, and the benchmark
// awaits each result. The baseline hands over a result channel instead.
func BenchmarkHandOff(b *testing.B) {
	ctx := context.Background()
	b.Run("baseline=chan", func(b *testing.B) {
		b.ReportAllocs()
		work := make(chan chan int)
		defer close(work)
		go func() {
			for ch := range work {
				ch <- 1
			}
		}()
		for b.Loop() {
			ch := make(chan int, 1)
			work <- ch
			benchSink = <-ch
		}
	})
	b.Run("Promise", func(b *testing.B) {
		b.ReportAllocs()
		work := make(chan *Promise[int])
		defer close(work)
		go func() {
			for p := range work {
				p.Complete(1, nil)
			}
		}()
		for b.Loop() {
			p := new(Promise[int])
			work <- p
			benchSink, _ = p.Future().Await(ctx)
		}
	})
}

func BenchmarkCompleteThenAwait(b *testing.B) {
	ctx := context.Background()
	b.Run("Ready+Await", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			benchFuture = Ready(1)
			benchSink, _ = benchFuture.Await(ctx)
		}
	})
	b.Run("Promise+Complete+Await", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p := new(Promise[int])
			benchFuture = p.Future()
			p.Complete(1, nil)
			benchSink, _ = benchFuture.Await(ctx)
		}
	})
	b.Run("Ready+Await/parallel", func(b *testing.B) {
		b.ReportAllocs()
		var mu sync.Mutex
		b.RunParallel(func(pb *testing.PB) {
			var last *Future[int]
			for pb.Next() {
				last = Ready(1)
				_, _ = last.Await(ctx)
			}
			mu.Lock()
			benchFuture = last // makes every Ready escape, as in real use
			mu.Unlock()
		})
	})
}

func BenchmarkAll(b *testing.B) {
	ctx := context.Background()
	const n = 8
	b.Run("completed", func(b *testing.B) {
		b.ReportAllocs()
		fs := make([]*Future[int], n)
		for i := range fs {
			fs[i] = Ready(i)
		}
		for b.Loop() {
			_, _ = All(ctx, fs...)
		}
	})
	b.Run("pending", func(b *testing.B) {
		b.ReportAllocs()
		work := make(chan []*Promise[int])
		defer close(work)
		go func() {
			for ps := range work {
				for _, p := range ps {
					p.Complete(1, nil)
				}
			}
		}()
		for b.Loop() {
			ps, fs := promises(n)
			work <- ps
			_, _ = All(ctx, fs...)
		}
	})
}
