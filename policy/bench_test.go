package policy_test

import (
	"context"
	"testing"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/policy"
)

func okCall(context.Context) (int, error) { return 1, nil }

// BenchmarkOverhead is the cost of each policy around a trivial call that
// succeeds at once (no retry, no hedge), beside executor.Do alone in the
// same run: the difference is the policy's bookkeeping.
func BenchmarkOverhead(b *testing.B) {
	ex, err := executor.New("bench", executor.Config{Slots: 1024, InvocationTimeout: time.Second, Breaker: breaker.Config{ResetTimeout: 2 * time.Second}})
	if err != nil {
		b.Fatal(err)
	}
	defer ex.Close(context.Background())
	r, _ := policy.NewRetrier(policy.RetryConfig{})
	h, _ := policy.NewHedger(policy.HedgeConfig{Delay: time.Second})
	for _, c := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"do", func(ctx context.Context) error { _, err := executor.Do(ctx, ex, okCall); return err }},
		{"retry", func(ctx context.Context) error { _, err := policy.Retry(ctx, r, ex, okCall); return err }},
		{"hedge", func(ctx context.Context) error { _, err := policy.Hedge(ctx, h, ex, okCall); return err }},
	} {
		b.Run(c.name+"/serial", func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := c.call(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.call(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
