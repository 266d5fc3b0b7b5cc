package throttle_test

import (
	"testing"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/throttle"
)

// BenchmarkThrottle is Admit+Record of an accepted request, throttle idle,
// beside the closed path of a consecutive-failure breaker (Allow+Done),
// the baseline the throttle's cost is held to (≤ 1.2×).
func BenchmarkThrottle(b *testing.B) {
	th, err := throttle.New(throttle.Config{})
	if err != nil {
		b.Fatal(err)
	}
	br, err := breaker.New(breaker.Config{ConsecutiveFailures: 5, ResetTimeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	epoch := time.Now()
	now := int64(time.Since(epoch))
	b.Run("breaker/serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, _ := br.Allow()
			p.Done(nil)
		}
	})
	b.Run("breaker+throttle/serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, _ := br.Allow()
			if th.Admit(now, priority.Default) {
				th.Record(now, priority.Default, true)
			}
			p.Done(nil)
		}
	})
	b.Run("breaker/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, _ := br.Allow()
				p.Done(nil)
			}
		})
	})
	b.Run("breaker+throttle/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, _ := br.Allow()
				if th.Admit(now, priority.Default) {
					th.Record(now, priority.Default, true)
				}
				p.Done(nil)
			}
		})
	})
}
