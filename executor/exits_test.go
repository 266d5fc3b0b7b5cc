package executor_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Acceptance 7: whatever way a call ends, its slot comes back (once the
// function has returned) and the executor is idle again.
func TestEveryExitReleasesTheSlot(t *testing.T) {
	never := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }
	tests := []struct {
		name string
		// run makes one call end a certain way and returns the error the
		// caller saw.
		run  func(t *testing.T, ex *executor.Executor) error
		want error
	}{
		{"success", func(t *testing.T, ex *executor.Executor) error {
			_, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 1, nil })
			return err
		}, nil},
		{"error", func(t *testing.T, ex *executor.Executor) error {
			_, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 0, errBoom })
			return err
		}, errBoom},
		{"panic", func(t *testing.T, ex *executor.Executor) error {
			_, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) { panic("x") })
			return err
		}, &breaker.PanicError{}},
		{"runtime.Goexit", func(t *testing.T, ex *executor.Executor) error {
			_, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) { runtime.Goexit(); return 0, nil })
			return err
		}, nil},
		{"timeout", func(t *testing.T, ex *executor.Executor) error {
			_, err := executor.Do(t.Context(), ex, never)
			return err
		}, executor.ErrTimeout},
		{"caller cancellation while running", func(t *testing.T, ex *executor.Executor) error {
			ctx, cancel := context.WithCancel(t.Context())
			f, err := executor.Submit(ctx, ex, never)
			require.NoError(t, err)
			time.Sleep(time.Millisecond)
			cancel()
			_, err = f.Await(t.Context())
			return err
		}, context.Canceled},
		{"cancellation while queued", func(t *testing.T, ex *executor.Executor) error {
			hold := make(chan struct{})
			first, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) { <-hold; return 0, nil })
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			ran := false
			f, err := executor.Submit(ctx, ex, func(context.Context) (int, error) { ran = true; return 0, nil })
			require.NoError(t, err)
			require.Equal(t, 1, ex.Stats().Queued)
			cancel()
			_, err = f.Await(t.Context())
			close(hold)
			_, ferr := first.Await(t.Context())
			require.NoError(t, ferr)
			assert.False(t, ran, "a cancelled queued call never runs")
			return err
		}, context.Canceled},
		{"queue timeout", func(t *testing.T, ex *executor.Executor) error {
			hold := make(chan struct{})
			// The first call ignores its context, so its slot stays held past
			// the queue wait bound.
			first, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) { <-hold; return 0, nil })
			require.NoError(t, err)
			f, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) { return 0, nil })
			require.NoError(t, err)
			_, err = f.Await(t.Context())
			close(hold)
			first.Await(t.Context())
			return err
		}, executor.ErrQueueTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ex := newExecutor(t, executor.Config{Slots: 1, Queue: 1, InvocationTimeout: time.Second,
					Breaker: breaker.Config{ResetTimeout: 3 * time.Second}})
				err := tt.run(t, ex)
				switch want := tt.want.(type) {
				case nil:
					if tt.name != "runtime.Goexit" {
						require.NoError(t, err)
					} else {
						require.ErrorContains(t, err, "Goexit")
					}
				case *breaker.PanicError:
					require.ErrorAs(t, err, &want)
				default:
					require.ErrorIs(t, err, want)
				}
				synctest.Wait()
				st := ex.Stats()
				assert.Zero(t, st.InUse, "slot released")
				assert.Zero(t, st.Queued)
				assert.Zero(t, st.Overdue)
				_, err = executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 0, nil })
				assert.NoError(t, err, "the slot can be used again")
			})
		})
	}

	t.Run("Close", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex, err := executor.New("payments", executor.Config{Slots: 1, Queue: 1})
			require.NoError(t, err)
			hold := make(chan struct{})
			running, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) { <-hold; return 7, nil })
			require.NoError(t, err)
			queued, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) { return 0, nil })
			require.NoError(t, err)

			closed := make(chan error)
			go func() { closed <- ex.Close(context.Background()) }()
			synctest.Wait()
			_, err = resultNow(queued)
			assert.ErrorIs(t, err, executor.ErrClosed, "queued calls are cancelled")
			_, err = executor.Submit(t.Context(), ex, func(context.Context) (int, error) { return 0, nil })
			assert.ErrorIs(t, err, executor.ErrClosed)
			select {
			case <-closed:
				t.Fatal("Close returned while a call was running")
			default:
			}
			close(hold)
			require.NoError(t, <-closed)
			v, err := running.Await(t.Context())
			require.NoError(t, err, "running calls finish")
			assert.Equal(t, 7, v)
			assert.Zero(t, ex.Stats().InUse)
			require.NoError(t, ex.Close(context.Background()), "Close is idempotent")
		})
	})

	t.Run("Close that gives up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex, err := executor.New("payments", executor.Config{Slots: 1, InvocationTimeout: time.Hour,
				Breaker: breaker.Config{ResetTimeout: 2 * time.Hour}})
			require.NoError(t, err)
			hold := make(chan struct{})
			f, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) { <-hold; return 0, nil })
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			require.ErrorIs(t, ex.Close(ctx), context.DeadlineExceeded)
			_, err = resultNow(f)
			assert.ErrorIs(t, err, executor.ErrClosed, "the caller is not left waiting")
			assert.Equal(t, 1, ex.Stats().Overdue)
			close(hold)
			require.NoError(t, ex.Close(context.Background()), "a later Close waits for the rest")
			assert.Zero(t, ex.Stats().InUse)
		})
	})
}

// Close waits for an expiry still running on the deadline timer, even one
// held up by a listener slower than the timer's housekeeping (the timeline
// must not retire under it).
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
		_, err = resultNow(f)
		assert.ErrorIs(t, err, executor.ErrTimeout, "and the future is resolved")
	})
}
