package executor_test

import (
	"context"
	"testing"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/throttle"
)

// BenchmarkThrottleMode is the closed path of an executor with
// Config.Throttle (its defaults, nothing throttled) beside the same
// executor without it, whose breaker counts consecutive failures: a Lease
// and Done (no goroutine: the cheapest admitted call) and a Submit+Await
// of a trivial function. The target is ≤ 1.2× and 0 allocations added.
func BenchmarkThrottleMode(b *testing.B) {
	for _, mode := range []struct {
		name string
		th   *throttle.Config
	}{{"breaker", nil}, {"throttle", &throttle.Config{}}} {
		ex, err := executor.New("bench", executor.Config{Slots: 1 << 20, Throttle: mode.th})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = ex.Close(context.Background()) })
		b.Run("lease/"+mode.name, func(b *testing.B) {
			serialAndParallel(b, background, func(b *testing.B, ctx context.Context) {
				l, err := ex.Lease(ctx)
				if err != nil {
					b.Fatal(err)
				}
				l.Done(nil)
			})
		})
		b.Run("submit/"+mode.name, func(b *testing.B) { serialAndParallel(b, background, submitAwait(ex, trivial)) })
	}
}
