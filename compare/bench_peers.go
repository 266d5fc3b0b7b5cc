package compare

import (
	"testing"

	sentinel "github.com/alibaba/sentinel-golang/api"
	sentinelbase "github.com/alibaba/sentinel-golang/core/base"
	sentinelcb "github.com/alibaba/sentinel-golang/core/circuitbreaker"
	"github.com/alibaba/sentinel-golang/core/stat"
	zerobreaker "github.com/zeromicro/go-zero/core/breaker"
)

// The Closed and Reject cases of go-zero's breaker and Sentinel-golang's
// circuit breaker.

// sentinelBreakerChain is a slot chain with only what circuit breaking
// needs (the resource node, the breaker's check and its statistics), given
// to Entry with WithSlotChain: Sentinel's breaker without its flow,
// isolation, hot-spot and system checks.
func sentinelBreakerChain() *sentinelbase.SlotChain {
	sc := sentinelbase.NewSlotChain()
	sc.AddStatPrepareSlot(stat.DefaultResourceNodePrepareSlot)
	sc.AddRuleCheckSlot(sentinelcb.DefaultSlot)
	sc.AddStatSlot(sentinelcb.DefaultMetricStatSlot)
	return sc
}

// sentinelEntry makes one entry on res and exits it with err recorded; it
// reports whether the entry was admitted.
func sentinelEntry(res string, opts []sentinel.EntryOption, err error) bool {
	e, blocked := sentinel.Entry(res, opts...)
	if blocked != nil {
		return false
	}
	if err != nil {
		sentinel.TraceError(e, err)
	}
	e.Exit()
	return true
}

// openSentinel loads a rule that stays open for an hour and opens it with
// Failures failing entries.
func openSentinel(b *testing.B, opts []sentinel.EntryOption) string {
	res, err := SentinelResource("reject", hour)
	if err != nil {
		fail(b, err)
	}
	for range hour.Failures {
		sentinelEntry(res, opts, errBench)
	}
	if sentinelEntry(res, opts, nil) {
		fail(b, "sentinel did not open")
	}
	return res
}

// openGoZero fails calls through a fresh go-zero breaker until it drops
// nearly all of them. It has no open state: it drops a call with a
// probability that approaches 1 as failures and drops accumulate, and lets
// one through when none passed for a second.
func openGoZero() zerobreaker.Breaker {
	quietGoZero()
	br := zerobreaker.NewBreaker()
	for range 10000 {
		_ = br.Do(failErr)
	}
	return br
}

func sentinelCases(group string, lib string, opts []sentinel.EntryOption) []Case {
	if group == "Closed" {
		open := func(b *testing.B) string {
			res, err := SentinelResource("bench-closed", BenchSettings)
			if err != nil {
				fail(b, err)
			}
			return res
		}
		return both(group, lib, func(b *testing.B) {
			res := open(b)
			defer sentinelcb.ClearRulesOfResource(res)
			b.ReportAllocs()
			for b.Loop() {
				if !sentinelEntry(res, opts, nil) {
					fail(b, "blocked")
				}
			}
		}, func(b *testing.B) {
			res := open(b)
			defer sentinelcb.ClearRulesOfResource(res)
			b.ReportAllocs()
			b.ResetTimer() // RunParallel does not, as b.Loop does
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if !sentinelEntry(res, opts, nil) {
						fail(b, "blocked")
					}
				}
			})
		})
	}
	return both(group, lib, func(b *testing.B) {
		res := openSentinel(b, opts)
		defer sentinelcb.ClearRulesOfResource(res)
		b.ReportAllocs()
		for b.Loop() {
			if sentinelEntry(res, opts, nil) {
				fail(b, "admitted")
			}
		}
	}, func(b *testing.B) {
		res := openSentinel(b, opts)
		defer sentinelcb.ClearRulesOfResource(res)
		b.ReportAllocs()
		b.ResetTimer() // RunParallel does not, as b.Loop does
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if sentinelEntry(res, opts, nil) {
					fail(b, "admitted")
				}
			}
		})
	})
}

func peerCases(group string) []Case {
	outbound := []sentinel.EntryOption{sentinel.WithTrafficType(sentinelbase.Outbound)}
	chain := append(outbound, sentinel.WithSlotChain(sentinelBreakerChain()))
	var cs []Case
	if group == "Closed" {
		cs = append(cs, both(group, "go-zero", func(b *testing.B) {
			quietGoZero()
			br := zerobreaker.NewBreaker()
			b.ReportAllocs()
			for b.Loop() {
				if err := br.Do(okErr); err != nil {
					fail(b, err)
				}
			}
		}, func(b *testing.B) {
			quietGoZero()
			br := zerobreaker.NewBreaker()
			b.ReportAllocs()
			b.ResetTimer() // RunParallel does not, as b.Loop does
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := br.Do(okErr); err != nil {
						fail(b, err)
					}
				}
			})
		})...)
	} else {
		// The supplier is still down: a call go-zero lets through (its drop
		// probability is below 1) fails, and is counted, not failed:
		// admitted/op says how often that happened.
		cs = append(cs, both(group, "go-zero", func(b *testing.B) {
			br := openGoZero()
			admitted := 0
			b.ReportAllocs()
			for b.Loop() {
				if br.Do(failErr) == errBench {
					admitted++
				}
			}
			b.ReportMetric(float64(admitted)/float64(b.N), "admitted/op")
		}, func(b *testing.B) {
			br := openGoZero()
			b.ReportAllocs()
			b.ResetTimer() // RunParallel does not, as b.Loop does
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_ = br.Do(failErr)
				}
			})
		})...)
	}
	cs = append(cs, sentinelCases(group, "sentinel-golang", outbound)...)
	cs = append(cs, sentinelCases(group, "sentinel-golang-breakerchain", chain)...)
	return cs
}
