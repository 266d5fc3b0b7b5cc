package executor_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Found in review: a listener slower than the timer's housekeeping let the
// deadline timeline retire while an expiry was still running, so Close did
// not wait for it.
func TestCloseWaitsForASlowListenerOnTheTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var inListener, listenerDone atomic.Bool
		ex, err := executor.New("payments", executor.Config{InvocationTimeout: 100 * time.Millisecond,
			Breaker: breaker.Config{ConsecutiveFailures: 1, OnTransition: func(e breaker.Event) {
				if e.To == breaker.Open {
					inListener.Store(true)
					time.Sleep(10 * time.Millisecond)
					listenerDone.Store(true)
				}
			}}})
		require.NoError(t, err)
		f, err := executor.Submit(context.Background(), ex, func(context.Context) (int, error) {
			time.Sleep(102 * time.Millisecond) // ignores its deadline a little
			return 1, nil
		})
		require.NoError(t, err)
		time.Sleep(103 * time.Millisecond)
		require.True(t, inListener.Load(), "the timeout's transition is being delivered on the timer")
		require.NoError(t, ex.Close(context.Background()))
		assert.True(t, listenerDone.Load(), "Close waited for the timer goroutine")
		_, err = f.TryAwait()
		assert.ErrorIs(t, err, executor.ErrTimeout, "and the future is resolved")
	})
}

// Found in review: a lookup could hand out the executor that its own sweep
// evicted (and closed) a moment later.
func TestLookupAfterIdlenessNeverReturnsAClosedExecutor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{IdleTimeout: time.Minute})
		ok := func(context.Context) (int, error) { return 1, nil }
		ex, err := g.Executor("a")
		require.NoError(t, err)
		_, err = executor.Do(t.Context(), ex, ok)
		require.NoError(t, err)
		for range 3 {
			time.Sleep(61 * time.Second)
			got, err := g.Executor("a")
			require.NoError(t, err)
			_, err = executor.Do(t.Context(), got, ok)
			require.NoError(t, err, "a plain lookup then Submit must work after any idle period")
			time.Sleep(61 * time.Second)
			g.Executor("b")
		}
	})
}

// Found in review: Group.Close waited without bound for an evicted executor
// that was still finishing a call.
func TestGroupCloseHonoursItsContextWithAnEvictedExecutorDraining(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, err := executor.NewGroup(executor.GroupConfig{IdleTimeout: time.Minute,
			Default: executor.Config{InvocationTimeout: time.Hour, Breaker: breaker.Config{ResetTimeout: 2 * time.Hour}}})
		require.NoError(t, err)
		held, _ := g.Executor("a")
		time.Sleep(61 * time.Second)
		g.Executor("b") // the sweep evicts a (idle, unused)
		release := make(chan struct{})
		_, err = executor.Submit(context.Background(), held, func(context.Context) (int, error) { <-release; return 1, nil })
		require.ErrorIs(t, err, executor.ErrClosed, "an evicted executor refuses calls at once")

		fresh, _ := g.Executor("a")
		f, err := executor.Submit(context.Background(), fresh, func(context.Context) (int, error) { <-release; return 1, nil })
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		err = g.Close(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 10*time.Second, time.Since(start), "Close gave up when its context ended")
		_, err = f.TryAwait()
		assert.ErrorIs(t, err, executor.ErrClosed)
		close(release)
		require.NoError(t, g.Close(context.Background()))
	})
}

// Found in review: context.Cause must say what ended the call's context,
// as it does for context.WithDeadline.
func TestCauseAfterTheCallsOwnDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, executor.Config{InvocationTimeout: time.Second})
		parent, cancel := context.WithCancelCause(t.Context())
		errAway := errors.New("client went away")
		f, err := executor.Submit(parent, ex, func(ctx context.Context) (int, error) {
			<-ctx.Done() // its own deadline
			cancel(errAway)
			assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
			assert.ErrorIs(t, context.Cause(ctx), context.DeadlineExceeded)
			return 0, ctx.Err()
		})
		require.NoError(t, err)
		_, err = f.Await(t.Context())
		assert.ErrorIs(t, err, executor.ErrTimeout)
	})
}
