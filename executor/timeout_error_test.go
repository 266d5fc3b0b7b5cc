package executor_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
)

// The error of a timed-out call names the supplier and the timeout, and
// still matches ErrTimeout and context.DeadlineExceeded, whichever side
// noticed the deadline first: the timer (a function that ignores its
// context) or the function (one that honours it).
func TestATimeoutNamesTheSupplierAndTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, executor.Config{InvocationTimeout: 2 * time.Second})
		s := newSupplier()
		s.hang()
		for _, fn := range []func(context.Context) (string, error){s.stubborn, s.cooperative} {
			_, err := executor.Do(t.Context(), ex, fn)
			require.EqualError(t, err, "fusebox: payments: invocation timeout after 2s")
			assert.ErrorIs(t, err, executor.ErrTimeout)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.NotErrorIs(t, err, executor.ErrQueueTimeout)
			var to interface{ Timeout() bool }
			require.ErrorAs(t, err, &to)
			assert.True(t, to.Timeout())
		}

		require.NoError(t, ex.Reconfigure(executor.Config{InvocationTimeout: 3 * time.Second}))
		_, err := executor.Do(t.Context(), ex, s.cooperative)
		require.EqualError(t, err, "fusebox: payments: invocation timeout after 3s", "the timeout in force")

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		f, err := executor.Submit(ctx, ex, s.stubborn)
		require.NoError(t, err)
		_, err = f.Await(t.Context()) // the caller's ctx would end Await first
		require.EqualError(t, err, "fusebox: payments: invocation timeout at the caller's deadline")
		assert.ErrorIs(t, err, executor.ErrTimeout)
		s.unhang()
	})
}

// A timeout allocates no error: each executor makes its own once.
func TestATimeoutErrorIsMadeOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, executor.Config{InvocationTimeout: time.Second})
		s := newSupplier()
		s.hang()
		_, first := executor.Do(t.Context(), ex, s.cooperative)
		_, second := executor.Do(t.Context(), ex, s.stubborn)
		assert.Same(t, first, second)
		s.unhang()
	})
}
