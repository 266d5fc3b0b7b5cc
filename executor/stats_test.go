package executor_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Stats read under load always describe a possible state: the slot counts
// add up, nothing exceeds its bound, counters never go backwards.
func TestStatsAreConsistentUnderLoad(t *testing.T) {
	ex := newExecutor(t, executor.Config{Slots: 4, Queue: 4, InvocationTimeout: 50 * time.Millisecond,
		Breaker: breaker.Config{ConsecutiveFailures: -1, ResetTimeout: time.Second}})
	ctx := context.Background()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; i < 2000 && !stop.Load(); i++ {
				f, err := executor.Submit(ctx, ex, func(ctx context.Context) (int, error) {
					switch (g + i) % 4 {
					case 0:
						return 0, errBoom
					case 1:
						<-ctx.Done() // times out
						return 0, ctx.Err()
					}
					return i, nil
				})
				if err == nil {
					f.Await(ctx)
				}
			}
		})
	}
	var prev executor.Stats
	for range 20_000 {
		s := ex.Stats()
		require.Equal(t, s.Slots, s.InUse+s.Free)
		require.LessOrEqual(t, s.InUse, s.Slots)
		require.LessOrEqual(t, s.Queued, s.QueueCap)
		require.GreaterOrEqual(t, s.Overdue, 0)
		require.GreaterOrEqual(t, s.Successes, prev.Successes)
		require.GreaterOrEqual(t, s.Failures, prev.Failures)
		require.GreaterOrEqual(t, s.Timeouts, prev.Timeouts)
		prev = s
	}
	stop.Store(true)
	wg.Wait()
	require.NoError(t, ex.Close(ctx)) // waits for functions still returning after their timeout
	s := ex.Stats()
	require.Zero(t, s.InUse)
	require.Zero(t, s.Queued)
	require.Zero(t, s.Overdue)
	require.Positive(t, s.Successes)
	require.Positive(t, s.Timeouts)
}
