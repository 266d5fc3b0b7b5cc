package throttle_test

import (
	"testing"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/throttle"
)

var sinkNow int64

// BenchmarkThrottleWithClock is BenchmarkThrottle with the clock read the
// executor makes for Admit on every call (a monotonic time.Since): the
// breaker's closed path alone, the breaker with that clock read alone,
// and the breaker with the throttle's Admit+Record at the time read.
func BenchmarkThrottleWithClock(b *testing.B) {
	th, err := throttle.New(throttle.Config{})
	if err != nil {
		b.Fatal(err)
	}
	br, err := breaker.New(breaker.Config{ConsecutiveFailures: 5, ResetTimeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	epoch := time.Now()
	ops := []struct {
		name string
		op   func() int64
	}{
		{"breaker", func() int64 { p, _ := br.Allow(); p.Done(nil); return 0 }},
		{"breaker+clock", func() int64 {
			p, _ := br.Allow()
			now := int64(time.Since(epoch))
			p.Done(nil)
			return now
		}},
		{"breaker+clock+throttle", func() int64 {
			p, _ := br.Allow()
			now := int64(time.Since(epoch))
			if th.Admit(now, priority.Default) {
				th.Record(now, priority.Default, true)
			}
			p.Done(nil)
			return now
		}},
	}
	for _, o := range ops {
		b.Run(o.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			var sum int64
			for b.Loop() {
				sum += o.op()
			}
			sinkNow = sum
		})
		b.Run(o.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var sum int64
				for pb.Next() {
					sum += o.op()
				}
				if sum == 1 {
					sinkNow = sum // keeps the clock read; never true
				}
			})
		})
	}
}
