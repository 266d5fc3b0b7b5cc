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

// A transition listener that ends the submitter's goroutine while the
// submitter's call trips the breaker leaves no active call behind: Close
// returns at once, and the refusal is counted.
func TestAListenerEndingTheSubmittersGoroutineLeavesNoActiveCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := executor.New("payments", executor.Config{Slots: 1, InvocationTimeout: time.Second,
			Stuck: literal,
			Breaker: breaker.Config{ResetTimeout: time.Minute, OnTransition: func(e breaker.Event) {
				if e.To == breaker.Open {
					runtime.Goexit()
				}
			}}})
		require.NoError(t, err)
		release := make(chan struct{})
		f, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) { <-release; return 1, nil })
		require.NoError(t, err)
		returned := make(chan bool, 1)
		go func() {
			defer func() { returned <- false }()
			_, _ = executor.Submit(context.Background(), ex, func(context.Context) (int, error) { return 0, nil })
			returned <- true
		}()
		assert.False(t, <-returned, "the listener ended the submitter's goroutine")
		assert.Equal(t, breaker.Open, ex.Breaker().State())
		assert.Equal(t, uint64(1), ex.Stats().Rejected.Saturated)
		close(release)
		_, err = f.Await(t.Context())
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		require.NoError(t, ex.Close(ctx), "no active call left")
	})
}

// goexitRunner starts calls with go statements, and ends its caller's
// goroutine instead for the calls whose number (from 1) exit says.
type goexitRunner struct {
	n    atomic.Int64
	exit int64
}

func (r *goexitRunner) Go(fn func()) error {
	if r.n.Add(1) == r.exit {
		runtime.Goexit()
	}
	go fn()
	return nil
}

// A Runner that ends its caller's goroutine (the submitter's, or that of
// the call whose end promotes a queued one) refuses the call with a
// *breaker.PanicError: no slot, active count or future is lost, and the
// call whose finish it interrupted resolves too.
func TestARunnerEndingItsGoroutineLosesNoCall(t *testing.T) {
	t.Run("on the submitter's goroutine", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{Runner: &goexitRunner{exit: 1},
				Default: executor.Config{Slots: 1, InvocationTimeout: time.Second}})
			ex, err := g.Executor("payments")
			require.NoError(t, err)
			go func() {
				_, _ = executor.Submit(context.Background(), ex, func(context.Context) (int, error) { return 1, nil })
			}()
			synctest.Wait()
			st := ex.Stats()
			assert.Zero(t, st.InUse, "the slot is free")
			assert.Equal(t, uint64(1), st.Panics)
			v, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 2, nil })
			require.NoError(t, err, "the next call runs")
			assert.Equal(t, 2, v)
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			defer cancel()
			require.NoError(t, ex.Close(ctx), "no active call left")
		})
	})
	t.Run("promoting a queued call", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{Runner: &goexitRunner{exit: 2},
				Default: executor.Config{Slots: 1, Queue: 1, InvocationTimeout: time.Second,
					Breaker: breaker.Config{ResetTimeout: time.Minute}}})
			ex, err := g.Executor("payments")
			require.NoError(t, err)
			release := make(chan struct{})
			first, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) { <-release; return 1, nil })
			require.NoError(t, err)
			queued, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) { return 2, nil })
			require.NoError(t, err)
			close(release) // the first call's end promotes the second: the Runner ends that goroutine
			synctest.Wait()

			_, err = resultNow(queued)
			var pe *breaker.PanicError
			require.ErrorAs(t, err, &pe, "the promoted call is refused")
			assert.Equal(t, "GroupConfig.Runner.Go", pe.Callback)
			_, err = resultNow(first)
			require.ErrorAs(t, err, &pe, "the call whose finish was interrupted resolves")
			st := ex.Stats()
			assert.Zero(t, st.InUse+st.Queued, "slots and queue free")
			assert.Equal(t, breaker.Closed, st.Breaker.State)
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			defer cancel()
			require.NoError(t, ex.Close(ctx), "no active call left")
		})
	})
}

// A transition listener that ends the goroutine of the call whose success
// closed the breaker (a half-open probe's) loses no outcome: the breaker
// recorded the success, and Stats counts it too.
func TestAListenerEndingAProbesGoroutineLosesNoSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := executor.New("payments", executor.Config{Slots: 1, InvocationTimeout: time.Second,
			Breaker: breaker.Config{ResetTimeout: time.Minute, OnTransition: func(e breaker.Event) {
				if e.To == breaker.Closed {
					runtime.Goexit()
				}
			}}})
		require.NoError(t, err)
		ex.Breaker().Trip(breaker.Manual)
		time.Sleep(time.Minute) // half-open: the next call probes
		f, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) { return 1, nil })
		require.NoError(t, err)
		_, err = f.Await(t.Context())
		require.Error(t, err, "the listener's Goexit is the call's error")
		assert.Equal(t, breaker.Closed, ex.Breaker().State(), "the probe's success closed it")
		st := ex.Stats()
		assert.Equal(t, uint64(1), st.Successes+st.Failures+st.Ignored, "one finished call, one outcome")
		assert.Equal(t, uint64(1), st.Successes)
		require.NoError(t, ex.Close(context.Background()))
	})
}
