package executor

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// White-box: the deadline machinery exists only while calls are in flight.
func TestIdleExecutorHoldsNoTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := New("payments", Config{Workers: 2, Queue: 2, InvocationTimeout: time.Second})
		require.NoError(t, err)
		defer ex.Close(context.Background())
		assert.Nil(t, ex.run.p.Load(), "nothing before the first call")

		hold := make(chan struct{})
		f1, _ := Submit(t.Context(), ex, func(context.Context) (int, error) { <-hold; return 1, nil })
		f2, _ := Submit(t.Context(), ex, func(context.Context) (int, error) { <-hold; return 1, nil })
		f3, _ := Submit(t.Context(), ex, func(context.Context) (int, error) { return 1, nil }) // queued
		assert.NotNil(t, ex.run.p.Load(), "a timeline while calls run")
		assert.NotNil(t, ex.queued.Load().p.Load(), "and one for the queue")
		close(hold)
		for _, f := range []interface {
			Await(context.Context) (int, error)
		}{f1, f2, f3} {
			_, err := f.Await(t.Context())
			require.NoError(t, err)
		}
		time.Sleep(2 * time.Second) // the timers fire once more, find nothing, retire
		assert.Nil(t, ex.run.p.Load(), "an idle executor keeps no timeline and no timer")
		assert.Nil(t, ex.queued.Load().p.Load())

		// And a new call makes a new one.
		_, err = Do(t.Context(), ex, func(context.Context) (int, error) { return 1, nil })
		require.NoError(t, err)
		assert.NotNil(t, ex.run.p.Load())
	})
}

// Timeouts still work across retirements: a call made after the timeline
// retired times out on the new one.
func TestTimeoutAfterRetirement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := New("payments", Config{InvocationTimeout: time.Second})
		require.NoError(t, err)
		defer ex.Close(context.Background())
		for range 3 {
			_, err := Do(t.Context(), ex, func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
			require.ErrorIs(t, err, ErrTimeout)
			time.Sleep(10 * time.Second)
			assert.Nil(t, ex.run.p.Load())
		}
	})
}
