package executor_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// A supplier that answers every call, slowly (800 ms, past the stuck age
// of 500 ms): a bulkhead its calls fill is busy, not stuck, while calls
// that old keep returning successfully. Once it hangs, the bulkhead trips
// as soon as the hung calls are old, a stuck age after the last slow
// success.
func TestOldCallsThatCompleteMakeABusyBulkhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := &events{}
		ex := newExecutor(t, executor.Config{Slots: 2, InvocationTimeout: time.Second,
			Breaker: breaker.Config{ResetTimeout: 2 * time.Second, OnTransition: ev.listen}})
		slow := func(context.Context) (int, error) { time.Sleep(800 * time.Millisecond); return 0, nil }
		hung := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }
		submit := func(fn func(context.Context) (int, error)) error {
			_, err := executor.Submit(t.Context(), ex, fn)
			return err
		}

		require.NoError(t, submit(slow)) // 0 → 800 ms
		time.Sleep(400 * time.Millisecond)
		require.NoError(t, submit(slow)) // 400 → 1200 ms
		time.Sleep(400 * time.Millisecond)
		synctest.Wait()                  // the first returned at 800 ms, 800 ms old
		require.NoError(t, submit(slow)) // 800 → 1600 ms
		time.Sleep(200 * time.Millisecond)

		// 1000 ms: one of the two slots holds a call 600 ms old (the stuck
		// rule needs one of two), and a call that old returned 200 ms ago.
		assert.Equal(t, executor.RejectedBusy, rejection(t, submit(slow)))
		assert.Equal(t, breaker.Closed, ex.Breaker().State())

		// The supplier hangs: the two slots free at 1200 and 1600 ms take
		// calls that never answer.
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		require.NoError(t, submit(hung)) // 1200 ms
		time.Sleep(400 * time.Millisecond)
		synctest.Wait()
		require.NoError(t, submit(hung)) // 1600 ms, as the last slow call returns
		time.Sleep(500*time.Millisecond - time.Nanosecond)
		assert.Equal(t, executor.RejectedBusy, rejection(t, submit(hung)), "a stuck age after the last slow success, less 1 ns")
		time.Sleep(time.Nanosecond)
		assert.Equal(t, executor.RejectedSaturated, rejection(t, submit(hung)), "a stuck age after the last slow success")
		assert.Equal(t, []string{"closed>open:saturation"}, ev.list())
	})
}
