package bulkhead_test

import (
	"testing"

	"github.com/fusebox-go/fusebox/bulkhead"
)

func newBenchBulkhead(b *testing.B, cfg bulkhead.Config) *bulkhead.Bulkhead {
	b.Helper()
	bh, err := bulkhead.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return bh
}

// BenchmarkTryAcquireRelease is the admitted path without waiters: two
// CAS loops on one word.
func BenchmarkTryAcquireRelease(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		bh := newBenchBulkhead(b, bulkhead.Config{Slots: 1})
		b.ReportAllocs()
		for b.Loop() {
			if !bh.TryAcquire() {
				b.Fatal("TryAcquire failed")
			}
			bh.Release()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		// Enough slots for every goroutine, so each iteration succeeds.
		bh := newBenchBulkhead(b, bulkhead.Config{Slots: 1 << 20, Queue: 16})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !bh.TryAcquire() {
					b.Error("TryAcquire failed")
					return
				}
				bh.Release()
			}
		})
	})
}

// BenchmarkRejectWhenFull is the saturation path: it must not allocate.
func BenchmarkRejectWhenFull(b *testing.B) {
	full := func(b *testing.B) (*bulkhead.Bulkhead, *bulkhead.Waiter) {
		bh := newBenchBulkhead(b, bulkhead.Config{Slots: 1, Queue: 1})
		bh.TryAcquire()
		w := new(bulkhead.Waiter)
		bh.Admit(w)
		return bh, new(bulkhead.Waiter)
	}
	b.Run("serial", func(b *testing.B) {
		bh, w := full(b)
		b.ReportAllocs()
		for b.Loop() {
			if bh.Admit(w) != bulkhead.Full {
				b.Fatal("admitted")
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		bh, _ := full(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			w := new(bulkhead.Waiter)
			for pb.Next() {
				if bh.Admit(w) != bulkhead.Full {
					b.Error("admitted")
					return
				}
			}
		})
	})
}

// BenchmarkGoStatement is the round trip of a trivial task started with a
// go statement, as the executor starts every call.
func BenchmarkGoStatement(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		ch := make(chan struct{})
		b.ReportAllocs()
		for b.Loop() {
			go func() { ch <- struct{}{} }()
			<-ch
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ch := make(chan struct{})
			for pb.Next() {
				go func() { ch <- struct{}{} }()
				<-ch
			}
		})
	})
}
