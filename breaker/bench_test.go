package breaker_test

import (
	"testing"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// Baselines measured in the same run: a bare monotonic clock read (what an
// open breaker must do to know when to admit a probe) and the mutex-based
// reference model, the "obvious" implementation.

var sinkDur time.Duration

func BenchmarkBaselineTimeSince(b *testing.B) {
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		sinkDur = time.Since(start)
	}
}

func BenchmarkAllowDoneClosed(b *testing.B) {
	br, _ := breaker.New(breaker.Config{})
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := br.Allow()
			if err != nil {
				b.Fatal(err)
			}
			p.Done(nil)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, err := br.Allow()
				if err != nil {
					b.Fatal(err)
				}
				p.Done(nil)
			}
		})
	})
	m := newModel(breaker.Config{})
	b.Run("model-serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, _ := m.Allow()
			m.Done(p, nil)
		}
	})
	b.Run("model-parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, _ := m.Allow()
				m.Done(p, nil)
			}
		})
	})
}

// With a count-based failure-rate window every call writes to the window.
func BenchmarkAllowDoneClosedRateWindow(b *testing.B) {
	br, _ := breaker.New(breaker.Config{FailureRate: 0.5})
	b.ReportAllocs()
	for b.Loop() {
		p, _ := br.Allow()
		p.Done(nil)
	}
}

func BenchmarkRejectOpen(b *testing.B) {
	br, _ := breaker.New(breaker.Config{ResetTimeout: time.Hour})
	br.Trip(breaker.Manual)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := br.Allow(); err == nil {
				b.Fatal("admitted")
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := br.Allow(); err == nil {
					b.Fatal("admitted")
				}
			}
		})
	})
	m := newModel(breaker.Config{ResetTimeout: time.Hour})
	m.Trip(breaker.Manual)
	b.Run("model-serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Allow(); err == nil {
				b.Fatal("admitted")
			}
		}
	})
}
