package executor_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
)

// A driver that follows its context (pgx) asks a lease's context for Done
// first and for Err once Done has closed: whatever ends the lease, the
// channel closes, Err and context.Cause say why, and a context derived
// from it ends with the same error.
func TestLeaseContextWatchedByADriver(t *testing.T) {
	errCause := errors.New("the request was abandoned")
	for _, tt := range []struct {
		name      string
		end       func(ctx context.Context, cancel context.CancelCauseFunc, l *executor.Lease, ex *executor.Executor)
		err       error
		cause     error
		elapsed   time.Duration
		noContext bool // the caller's context cannot end
	}{
		{
			name:    "the invocation deadline ends it",
			end:     func(context.Context, context.CancelCauseFunc, *executor.Lease, *executor.Executor) {},
			err:     context.DeadlineExceeded,
			cause:   context.DeadlineExceeded,
			elapsed: time.Second,
		},
		{
			name:      "the invocation deadline ends it under a caller's context that cannot end",
			end:       func(context.Context, context.CancelCauseFunc, *executor.Lease, *executor.Executor) {},
			err:       context.DeadlineExceeded,
			cause:     context.DeadlineExceeded,
			elapsed:   time.Second,
			noContext: true,
		},
		{
			name: "the caller's cancellation ends it with the caller's cause",
			end: func(_ context.Context, cancel context.CancelCauseFunc, _ *executor.Lease, _ *executor.Executor) {
				time.Sleep(100 * time.Millisecond)
				cancel(errCause)
			},
			err:     context.Canceled,
			cause:   errCause,
			elapsed: 100 * time.Millisecond,
		},
		{
			name: "Done ends it",
			end: func(_ context.Context, _ context.CancelCauseFunc, l *executor.Lease, _ *executor.Executor) {
				time.Sleep(200 * time.Millisecond)
				l.Done(nil)
			},
			err:     context.Canceled,
			cause:   context.Canceled,
			elapsed: 200 * time.Millisecond,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ex := newExecutor(t, executor.Config{InvocationTimeout: time.Second})
				parent, cancel := context.WithCancelCause(t.Context())
				defer cancel(nil)
				if tt.noContext {
					parent = context.WithoutCancel(parent)
				}
				l, err := ex.Lease(parent)
				require.NoError(t, err)
				defer l.Done(nil)
				ctx := l.Context()
				done := ctx.Done()
				require.NotNil(t, done, "the lease's deadline can end it")
				assert.Equal(t, done, ctx.Done(), "the same channel every time")
				require.NoError(t, ctx.Err())
				derived, stop := context.WithCancel(ctx)
				defer stop()
				start := time.Now()

				go tt.end(parent, cancel, l, ex)
				<-done
				assert.Equal(t, tt.elapsed, time.Since(start))
				require.ErrorIs(t, ctx.Err(), tt.err)
				assert.ErrorIs(t, context.Cause(ctx), tt.cause)
				<-derived.Done()
				assert.ErrorIs(t, derived.Err(), tt.err, "a derived context ends with the lease's error")
				if tt.cause != errCause {
					assert.NoError(t, parent.Err(), "the caller's context lives on")
				}
			})
		})
	}
}

// The lease's context leaves the caller's once the lease is over: the
// caller's context, cancelled afterwards, ends nothing of the lease's and
// reaches no stale watcher.
func TestLeaseContextLeavesTheCallersContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, executor.Config{InvocationTimeout: time.Second})
		parent, cancel := context.WithCancel(t.Context())
		l, err := ex.Lease(parent)
		require.NoError(t, err)
		done := l.Context().Done()
		l.Done(nil)
		<-done
		require.ErrorIs(t, l.Context().Err(), context.Canceled)
		cancel()
		synctest.Wait()
		assert.Equal(t, uint64(1), ex.Stats().Successes, "the lease counted once, as a success")
		assert.Zero(t, ex.Stats().Cancelled)
	})
}

// A lease and its call are one allocation; a lease whose context is
// watched (Done) under a caller's context that can end adds three: its
// context's state, and the child of the caller's context whose channel
// Done returns (its record, cancel function and channel).
func TestLeaseAllocations(t *testing.T) {
	ex := newExecutor(t, executor.Config{Slots: 1 << 10})
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tt := range []struct {
		name   string
		ctx    context.Context
		watch  bool
		allocs float64
	}{
		{"a lease never watched, whatever its caller's context", parent, false, 1},
		{"a lease watched under a context that cannot end", context.Background(), true, 3},
		{"a lease watched under a context that can end", parent, true, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := testing.AllocsPerRun(200, func() {
				l, err := ex.Lease(tt.ctx)
				if err != nil {
					panic(err)
				}
				if tt.watch {
					_ = l.Context().Done()
					_ = l.Context().Err()
				}
				l.Done(nil)
			})
			assert.LessOrEqual(t, got, tt.allocs)
		})
	}
}
