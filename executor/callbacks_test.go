package executor_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/future"
)

// apiError is what a classifier with a bug looks for with errors.As.
type apiError struct{ code int }

func (e *apiError) Error() string { return "api error" }

// buggyClassify dereferences the result of errors.As without checking it,
// so it panics on every error that is not an *apiError.
func buggyClassify(err error) breaker.Outcome {
	var ae *apiError
	errors.As(err, &ae)
	if ae.code >= 500 {
		return breaker.Failure
	}
	return breaker.Success
}

// panickyUnwrap is a user error whose Unwrap method panics, so that any
// errors.Is walk over it (DefaultClassify's) panics.
type panickyUnwrap struct{}

func (panickyUnwrap) Error() string { return "broken" }
func (panickyUnwrap) Unwrap() error { panic("Unwrap of a broken error") }

// requireCallbackPanic asserts that err is a *PanicError naming callback.
func requireCallbackPanic(t *testing.T, err error, callback string) {
	t.Helper()
	var pe *breaker.PanicError
	require.ErrorAs(t, err, &pe, "got %v, want a *PanicError", err)
	assert.Equal(t, callback, pe.Callback, "got callback %q, want %q", pe.Callback, callback)
	assert.Contains(t, err.Error(), callback)
	assert.NotEmpty(t, pe.Stack)
}

// Issue 10.1: a classifier that panics on the deadline timer's goroutine
// used to take the whole process down.
func TestAClassifierPanickingOnTheTimerResolvesTheFutureWithAPanicError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, executor.Config{InvocationTimeout: time.Second,
			Breaker: breaker.Config{ResetTimeout: time.Minute, Classify: buggyClassify}})
		release := make(chan struct{})
		f, err := executor.Submit(context.Background(), ex, func(context.Context) (int, error) {
			<-release // ignores its context: the timer records the timeout
			return 1, nil
		})
		require.NoError(t, err)
		_, err = f.Await(context.Background())
		requireCallbackPanic(t, err, "Breaker.Classify")
		close(release)
		synctest.Wait()
		s := ex.Stats()
		assert.Equal(t, uint64(1), s.Failures, "got %d failures, want the timeout counted as one", s.Failures)
		assert.Equal(t, uint64(1), s.Panics, "got %d panics, want 1", s.Panics)
		assert.Equal(t, 0, s.InUse)
	})
}

// Issue 10.2: the same panic on the worker goroutine used to leave the
// future unresolved forever, the call counted active and Close hanging.
func TestUserCallbacksPanickingOnTheWorkerResolveTheFuture(t *testing.T) {
	tests := []struct {
		name     string
		cfg      breaker.Config
		err      error
		callback string
	}{
		{"a classifier that dereferences a nil errors.As result",
			breaker.Config{Classify: buggyClassify}, errBoom, "Breaker.Classify"},
		{"an error whose Unwrap panics under the default classifier",
			breaker.Config{}, panickyUnwrap{}, "Breaker.Classify"},
		{"an ErrorKinds rule whose Match panics",
			breaker.Config{ErrorKinds: []breaker.KindRule{{Name: "refused", Consecutive: 3,
				Match: func(err error) bool { panic("Match with a bug") }}}},
			errBoom, "Breaker.ErrorKinds[0].Match (refused)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ex, err := executor.New("payments", executor.Config{Breaker: tt.cfg})
				require.NoError(t, err)
				_, err = executor.Do(context.Background(), ex, func(context.Context) (int, error) { return 0, tt.err })
				requireCallbackPanic(t, err, tt.callback)
				s := ex.Stats()
				assert.Equal(t, uint64(1), s.Failures, "got %d failures, want the call counted as one", s.Failures)
				assert.Equal(t, uint64(1), s.Panics)
				assert.Equal(t, 0, s.InUse, "the slot is free again")
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				require.NoError(t, ex.Close(ctx), "no call is left active")
			})
		})
	}
}

// A panicking classifier must not lose a half-open probe's place: the probe
// counts as a failed probe and the breaker re-opens.
func TestAClassifierPanickingOnAProbeReopensTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, executor.Config{InvocationTimeout: time.Second,
			Breaker: breaker.Config{ResetTimeout: time.Minute, Classify: buggyClassify}})
		ex.Breaker().Trip(breaker.Manual)
		time.Sleep(time.Minute)
		_, err := executor.Do(context.Background(), ex, func(context.Context) (int, error) { return 0, errBoom })
		requireCallbackPanic(t, err, "Breaker.Classify")
		assert.Equal(t, breaker.Open, ex.Breaker().State())
		assert.Equal(t, breaker.ProbeFailed, ex.Breaker().Stats().Reason)
	})
}

// Issue 10.4: Close waited without bound for the timer goroutine while a
// transition listener on it blocked.
func TestCloseReturnsByItsDeadlineWhileAListenerBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unblock := make(chan struct{})
		inListener := make(chan struct{})
		ex, err := executor.New("payments", executor.Config{InvocationTimeout: time.Second,
			Breaker: breaker.Config{ConsecutiveFailures: 1, ResetTimeout: time.Minute, OnTransition: func(e breaker.Event) {
				if e.To == breaker.Open {
					close(inListener)
					<-unblock
				}
			}}})
		require.NoError(t, err)
		release := make(chan struct{})
		_, err = executor.Submit(context.Background(), ex, func(context.Context) (int, error) {
			<-release // ignores its deadline: the timer records the timeout and trips
			return 1, nil
		})
		require.NoError(t, err)
		<-inListener

		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		err = ex.Close(ctx)
		assert.Equal(t, 100*time.Millisecond, time.Since(start), "Close returned at its deadline")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "1 calls still running")
		assert.Contains(t, err.Error(), "transition listener")

		close(unblock)
		close(release)
		require.NoError(t, ex.Close(context.Background()), "a later Close finds everything ended")
	})
}

// Issue 10.7: panics are failures, and counted, whatever their value and
// whether or not the caller had given up.
func TestAPanicIsAlwaysACountedFailure(t *testing.T) {
	tests := []struct {
		name   string
		cancel bool
		value  any
	}{
		{"a panic after the caller cancelled", true, "bug"},
		{"panic(context.Canceled)", false, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ex := newExecutor(t, executor.Config{})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				f, err := executor.Submit(ctx, ex, func(fctx context.Context) (int, error) {
					if tt.cancel {
						cancel()
						<-fctx.Done()
					}
					panic(tt.value)
				})
				require.NoError(t, err)
				synctest.Wait()
				_, err = resultNow(f)
				var pe *breaker.PanicError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, "fn", pe.Callback)
				s := ex.Stats()
				assert.Equal(t, uint64(1), s.Panics, "got %d panics, want 1", s.Panics)
				assert.Equal(t, uint64(1), s.Failures, "got %d failures, want 1", s.Failures)
				assert.Zero(t, s.Ignored)
			})
		})
	}
}

// Issue 10.7: after Group.Close, a lookup of a name that exists returned
// the closed executor and no error.
func TestGroupLookupAfterCloseIsErrClosed(t *testing.T) {
	g, err := executor.NewGroup(executor.GroupConfig{})
	require.NoError(t, err)
	_, err = g.Executor("a")
	require.NoError(t, err)
	require.NoError(t, g.Close(context.Background()))
	for _, name := range []string{"a", "b"} {
		ex, err := g.Executor(name)
		assert.ErrorIs(t, err, executor.ErrClosed, "name %q", name)
		assert.Nil(t, ex)
	}
}

// Issue 10.7 (documented behaviour): the listener runs before the future of
// the call that caused the transition resolves, so a blocking listener
// delays that call's result.
func TestABlockingListenerDelaysItsOwnCallsFuture(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unblock := make(chan struct{})
		ex := newExecutor(t, executor.Config{Breaker: breaker.Config{ConsecutiveFailures: 1,
			OnTransition: func(e breaker.Event) {
				if e.To == breaker.Open {
					<-unblock
				}
			}}})
		f, err := executor.Submit(context.Background(), ex, func(context.Context) (int, error) { return 0, errBoom })
		require.NoError(t, err)
		synctest.Wait()
		select {
		case <-f.Done():
			t.Fatal("the future resolved while the listener of its own transition was blocked")
		default:
		}
		close(unblock)
		_, err = f.Await(context.Background())
		assert.ErrorIs(t, err, errBoom)
	})
}

// A classifier or listener that blocks while one call times out delays
// that call's future only: the other calls timed out at the same instant
// resolve at their deadline.
func TestABlockingCallbackOnATimeoutDelaysNoOtherCall(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(block chan struct{}) breaker.Config
	}{
		{"a classifier that blocks on the first timeout", func(block chan struct{}) breaker.Config {
			var first atomic.Bool
			return breaker.Config{ResetTimeout: time.Minute, Classify: func(error) breaker.Outcome {
				if first.CompareAndSwap(false, true) {
					<-block
				}
				return breaker.Failure
			}}
		}},
		{"a listener that blocks on the trip a timeout causes", func(block chan struct{}) breaker.Config {
			return breaker.Config{ResetTimeout: time.Minute, ConsecutiveFailures: 1, OnTransition: func(e breaker.Event) {
				if e.To == breaker.Open {
					<-block
				}
			}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				block, release := make(chan struct{}), make(chan struct{})
				ex, err := executor.New("payments", executor.Config{InvocationTimeout: time.Second, Breaker: tt.cfg(block)})
				require.NoError(t, err)
				var fs []*future.Future[int]
				for range 3 {
					f, err := executor.Submit(context.Background(), ex, func(context.Context) (int, error) { <-release; return 0, nil })
					require.NoError(t, err)
					fs = append(fs, f)
				}
				time.Sleep(2 * time.Second)
				synctest.Wait()
				resolved := 0
				for _, f := range fs {
					if _, err := resultNow(f); errors.Is(err, executor.ErrTimeout) {
						resolved++
					}
				}
				assert.Equal(t, 2, resolved, "calls resolved with ErrTimeout while one callback blocks")

				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
				start := time.Now()
				err = ex.Close(ctx)
				assert.Equal(t, 100*time.Millisecond, time.Since(start), "Close returned at its deadline")
				require.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Contains(t, err.Error(), "still running for a timed-out call")

				close(block)
				close(release)
				require.NoError(t, ex.Close(context.Background()), "a later Close finds everything ended")
				for _, f := range fs {
					_, err := f.Await(context.Background())
					assert.ErrorIs(t, err, executor.ErrTimeout)
				}
			})
		})
	}
}

// A callback that ends its goroutine with runtime.Goexit (t.FailNow or a
// failed require in a test's classifier or listener) instead of returning
// is treated as one that panicked: the call resolves, the executor closes
// cleanly, and later events are still delivered.
func TestACallbackCallingGoexitIsTreatedAsAPanic(t *testing.T) {
	goexit := func(error) breaker.Outcome { runtime.Goexit(); return breaker.Failure }
	tests := []struct {
		name    string
		cfg     func(events *atomic.Int64) executor.Config
		fn      func(release chan struct{}) func(context.Context) (int, error)
		failure uint64 // failures the breaker counts
	}{
		{"a classifier on the call's goroutine", func(*atomic.Int64) executor.Config {
			return executor.Config{Breaker: breaker.Config{Classify: goexit}}
		}, func(chan struct{}) func(context.Context) (int, error) {
			return func(context.Context) (int, error) { return 0, errBoom }
		}, 1},
		{"a classifier on a timeout", func(*atomic.Int64) executor.Config {
			return executor.Config{InvocationTimeout: time.Second, Breaker: breaker.Config{ResetTimeout: time.Minute, Classify: goexit}}
		}, func(release chan struct{}) func(context.Context) (int, error) {
			return func(context.Context) (int, error) { <-release; return 1, nil }
		}, 1},
		{"a transition listener on the call's goroutine", func(events *atomic.Int64) executor.Config {
			return executor.Config{Breaker: breaker.Config{ConsecutiveFailures: 1, OnTransition: func(breaker.Event) {
				if events.Add(1) == 1 {
					runtime.Goexit()
				}
			}}}
		}, func(chan struct{}) func(context.Context) (int, error) {
			return func(context.Context) (int, error) { return 0, errBoom }
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var events atomic.Int64
				ex, err := executor.New("payments", tt.cfg(&events))
				require.NoError(t, err)
				release := make(chan struct{})
				f, err := executor.Submit(context.Background(), ex, tt.fn(release))
				require.NoError(t, err)
				time.Sleep(2 * time.Second)
				synctest.Wait()
				_, err = resultNow(f)
				var pe *breaker.PanicError
				require.ErrorAs(t, err, &pe, "the future resolved with a *PanicError")
				assert.Contains(t, pe.Error(), "runtime.Goexit")
				close(release)
				synctest.Wait()
				s := ex.Stats()
				assert.Equal(t, uint64(1), s.Panics)
				assert.Equal(t, tt.failure, s.Failures)
				assert.Zero(t, s.InUse, "slots held")

				if events.Load() > 0 { // later events are still delivered
					ex.Breaker().Reset()
					ex.Breaker().Trip(breaker.Manual)
					ex.Breaker().Reset()
					assert.Equal(t, int64(4), events.Load(), "events delivered: the one that exited and 3 more")
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				require.NoError(t, ex.Close(ctx), "no call is left running")
			})
		})
	}
}
