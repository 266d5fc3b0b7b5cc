package executor_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

type ctxKey struct{}

// The call's context behaves like one made by context.WithDeadline from the
// caller's, without costing one per call.
func TestCallContext(t *testing.T) {
	const T = 10 * time.Second
	cfg := executor.Config{Slots: 4, InvocationTimeout: T, Breaker: breaker.Config{ResetTimeout: 2 * T}}
	// inspect runs fn in a call and returns what it returned.
	inspect := func(t *testing.T, ctx context.Context, ex *executor.Executor, fn func(ctx context.Context) error) error {
		_, err := executor.Do(ctx, ex, func(ctx context.Context) (int, error) { return 0, fn(ctx) })
		return err
	}

	t.Run("deadline, done and err at the invocation timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, cfg)
			start := time.Now()
			err := inspect(t, t.Context(), ex, func(ctx context.Context) error {
				d, ok := ctx.Deadline()
				assert.True(t, ok)
				assert.Equal(t, start.Add(T), d, "counted from the moment the call starts")
				assert.NoError(t, ctx.Err())
				select {
				case <-ctx.Done():
					t.Error("done too early")
				default:
				}
				<-ctx.Done()
				assert.Equal(t, start.Add(T), time.Now())
				assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
				assert.ErrorIs(t, context.Cause(ctx), context.DeadlineExceeded)
				return ctx.Err()
			})
			assert.ErrorIs(t, err, executor.ErrTimeout)
		})
	})

	t.Run("the caller's earlier deadline wins", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, cfg)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			start := time.Now()
			f, err := executor.Submit(ctx, ex, func(ctx context.Context) (int, error) {
				d, _ := ctx.Deadline()
				assert.Equal(t, start.Add(2*time.Second), d)
				<-ctx.Done()
				return 0, ctx.Err()
			})
			require.NoError(t, err)
			_, err = f.Await(t.Context())
			assert.ErrorIs(t, err, executor.ErrTimeout, "a caller's deadline is a timeout, not a cancellation")
			assert.Equal(t, start.Add(2*time.Second), time.Now())
			assert.Equal(t, uint64(1), ex.Stats().Timeouts)
		})
	})

	t.Run("values and cancellation come from the caller", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, cfg)
			ctx, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "v"))
			started := make(chan struct{})
			f, err := executor.Submit(ctx, ex, func(ctx context.Context) (int, error) {
				assert.Equal(t, "v", ctx.Value(ctxKey{}))
				close(started)
				<-ctx.Done()
				return 0, ctx.Err()
			})
			require.NoError(t, err)
			<-started
			cancel()
			_, err = f.Await(t.Context())
			assert.ErrorIs(t, err, context.Canceled)
			st := ex.Stats()
			assert.Equal(t, uint64(1), st.Cancelled)
			assert.Equal(t, uint64(1), st.Ignored, "the caller's cancellation is not the supplier's failure")
			assert.Zero(t, st.Failures)
		})
	})

	t.Run("Err alone notices the caller's cancellation, and Done agrees afterwards", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, cfg)
			ctx, cancel := context.WithCancel(t.Context())
			proceed := make(chan struct{})
			f, err := executor.Submit(ctx, ex, func(ctx context.Context) (int, error) {
				<-proceed
				require.ErrorIs(t, ctx.Err(), context.Canceled)
				select {
				case <-ctx.Done():
				default:
					t.Error("Err is set but Done is open")
				}
				return 0, ctx.Err()
			})
			require.NoError(t, err)
			cancel()
			close(proceed)
			_, err = f.Await(t.Context())
			assert.ErrorIs(t, err, context.Canceled)
		})
	})

	t.Run("derived contexts and AfterFunc follow the call without a goroutine each", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, cfg)
			parent, cancelParent := context.WithCancel(t.Context())
			defer cancelParent()
			err := inspect(t, parent, ex, func(ctx context.Context) error {
				before := runtime.NumGoroutine()
				child, cancel := context.WithCancel(ctx)
				defer cancel()
				ran := make(chan struct{})
				stop := context.AfterFunc(ctx, func() { close(ran) })
				defer stop()
				assert.LessOrEqual(t, runtime.NumGoroutine(), before, "no watcher goroutines")
				<-child.Done()
				<-ran
				assert.ErrorIs(t, child.Err(), context.DeadlineExceeded)
				assert.ErrorIs(t, context.Cause(ctx), context.DeadlineExceeded,
					"the call's own deadline, not its parent's (still live) cause")
				return nil
			})
			assert.ErrorIs(t, err, executor.ErrTimeout)
		})
	})

	t.Run("the context ends when the function returns, like a deferred cancel", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, cfg)
			var kept context.Context
			ended := make(chan struct{})
			_, err := executor.Do(t.Context(), ex, func(ctx context.Context) (int, error) {
				kept = ctx
				go func() { <-ctx.Done(); close(ended) }() // work fn left behind
				return 1, nil
			})
			require.NoError(t, err)
			<-ended // no leak: the goroutine fn started is released
			assert.ErrorIs(t, kept.Err(), context.Canceled)

			_, err = executor.Do(t.Context(), ex, func(ctx context.Context) (int, error) { kept = ctx; return 1, nil })
			require.NoError(t, err)
			assert.ErrorIs(t, kept.Err(), context.Canceled, "also when nobody watched it during the call")
			<-kept.Done()
			stopped := make(chan struct{})
			context.AfterFunc(kept, func() { close(stopped) })
			<-stopped
		})
	})

	t.Run("context.Cause reports the caller's cause", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, cfg)
			errAway := errors.New("user navigated away")
			parent, cancel := context.WithCancelCause(t.Context())
			started := make(chan struct{})
			f, err := executor.Submit(parent, ex, func(ctx context.Context) (int, error) {
				close(started)
				<-ctx.Done()
				assert.ErrorIs(t, context.Cause(ctx), errAway)
				return 0, ctx.Err()
			})
			require.NoError(t, err)
			<-started
			cancel(errAway)
			_, err = f.Await(t.Context())
			assert.ErrorIs(t, err, context.Canceled)
		})
	})

	t.Run("a caller whose deadline passed before the call started is not the supplier's failure", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, cfg)
			entered := 0
			for range 5 {
				ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
				time.Sleep(2 * time.Millisecond)
				_, err := executor.Do(ctx, ex, func(context.Context) (int, error) { entered++; return 1, nil })
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				cancel()
			}
			synctest.Wait()
			st := ex.Stats()
			assert.Zero(t, entered, "nothing was called")
			assert.Equal(t, breaker.Closed, st.Breaker.State)
			assert.Zero(t, st.Failures)
			assert.Equal(t, uint64(5), st.Cancelled)
		})
	})

	t.Run("a call whose caller gave up before it started is not made", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, cfg)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			ran := false
			f, err := executor.Submit(ctx, ex, func(context.Context) (int, error) { ran = true; return 0, nil })
			require.NoError(t, err)
			_, err = f.Await(t.Context())
			assert.ErrorIs(t, err, context.Canceled)
			assert.False(t, ran)
			assert.Equal(t, uint64(1), ex.Stats().Cancelled)
		})
	})
}

func TestErrorValues(t *testing.T) {
	assert.ErrorIs(t, executor.ErrTimeout, context.DeadlineExceeded)
	assert.ErrorIs(t, executor.ErrQueueTimeout, executor.ErrTimeout)
	assert.ErrorIs(t, executor.ErrQueueTimeout, context.DeadlineExceeded)
	assert.NotErrorIs(t, executor.ErrTimeout, executor.ErrQueueTimeout)
	var to interface{ Timeout() bool }
	require.True(t, errors.As(executor.ErrTimeout, &to))
	assert.True(t, to.Timeout())
	assert.ErrorIs(t, &executor.RejectedError{Supplier: "payments", Reason: executor.RejectedOpen}, breaker.ErrOpen)
	r := &executor.RejectedError{Supplier: "payments", Reason: executor.RejectedQueueFull}
	assert.Equal(t, "fusebox: payments: rejected: queue-full", r.Error())
	assert.ErrorIs(t, r, executor.ErrSaturated)
	assert.NotErrorIs(t, r, executor.ErrBusy)
	busy := &executor.RejectedError{Supplier: "payments", Reason: executor.RejectedBusy}
	assert.ErrorIs(t, busy, executor.ErrBusy)
	assert.NotErrorIs(t, busy, executor.ErrSaturated, "busy: the breaker did not trip")
	assert.Equal(t, "Rejection(9)", executor.Rejection(9).String())
}

// Issue 12.1: the call's context answers context.Cause through documented
// behaviour only (a real child of a cancellable caller context, made at the
// first Value), whatever the order in which fn uses it.
func TestCallContextCauseWithoutStandardLibraryInternals(t *testing.T) {
	const T = 10 * time.Second
	cfg := executor.Config{InvocationTimeout: T, Breaker: breaker.Config{ResetTimeout: 2 * T}}
	t.Run("a value read before the deadline, the cause read after it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, cfg)
			parent := context.WithValue(t.Context(), ctxKey{}, "v")
			_, err := executor.Do(parent, ex, func(ctx context.Context) (int, error) {
				assert.Equal(t, "v", ctx.Value(ctxKey{}))
				assert.NoError(t, context.Cause(ctx), "no cause while the context is live")
				<-ctx.Done()
				assert.ErrorIs(t, context.Cause(ctx), context.DeadlineExceeded)
				return 0, ctx.Err()
			})
			assert.ErrorIs(t, err, executor.ErrTimeout)
		})
	})
	t.Run("a context kept after fn returned has ended with Canceled as its cause", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, cfg)
			var kept context.Context
			_, err := executor.Do(t.Context(), ex, func(ctx context.Context) (int, error) { kept = ctx; return 1, nil })
			require.NoError(t, err)
			assert.ErrorIs(t, context.Cause(kept), context.Canceled)
			assert.Equal(t, nil, kept.Value(ctxKey{}), "values still read through")
		})
	})
	t.Run("a child made with a cause keeps the call's deadline as its cause", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, cfg)
			_, err := executor.Do(t.Context(), ex, func(ctx context.Context) (int, error) {
				child, cancel := context.WithCancelCause(ctx)
				defer cancel(nil)
				<-child.Done()
				assert.ErrorIs(t, context.Cause(child), context.DeadlineExceeded)
				return 0, child.Err()
			})
			assert.ErrorIs(t, err, executor.ErrTimeout)
		})
	})
}

// context.Cause says what ended the call's context, as it does for
// context.WithDeadline.
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

// The call's context is safe for concurrent use, as every context is:
// goroutines of fn read its values and ask for Done while the first Value
// makes the child of a cancellable caller context.
func TestCallContextIsSafeForConcurrentUse(t *testing.T) {
	ex := newExecutor(t, executor.Config{Slots: 4})
	parent, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "v"))
	defer cancel()
	for range 200 {
		_, err := executor.Do(parent, ex, func(ctx context.Context) (int, error) {
			done := make(chan string, 3)
			for range 2 {
				go func() { done <- ctx.Value(ctxKey{}).(string) }()
			}
			go func() { <-ctx.Done(); done <- "done" }()
			got := []string{<-done, <-done}
			assert.Equal(t, []string{"v", "v"}, got)
			return 0, nil
		})
		require.NoError(t, err)
	}
}
