package executor_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// These race calls against Close and idle eviction in real time: what
// they assert holds in every interleaving, and the loops are bounded in
// count and time. Without their fixes each failed within a fraction of
// its bound on this project's 2-core machine.

// SubmitIn never returns ErrClosed from an open Group: a call that meets
// an executor the idle sweep is evicting looks the name up again.
func TestSubmitInNeverLosesARaceWithIdleEviction(t *testing.T) {
	g, err := executor.NewGroup(executor.GroupConfig{IdleTimeout: time.Nanosecond,
		Default: executor.Config{Slots: 2, InvocationTimeout: time.Second}})
	require.NoError(t, err)
	defer g.Close(context.Background())
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { // every lookup of another name sweeps
			for !stop.Load() {
				_, _ = g.Executor("other")
			}
		})
	}
	var closed, ok atomic.Int64
	deadline := time.Now().Add(time.Second)
	var callers sync.WaitGroup
	for range 2 {
		callers.Go(func() {
			for time.Now().Before(deadline) && closed.Load() == 0 {
				_, err := executor.DoIn(context.Background(), g, "x", func(context.Context) (int, error) { return 1, nil })
				switch {
				case errors.Is(err, executor.ErrClosed):
					closed.Add(1)
				case err == nil:
					ok.Add(1)
				}
			}
		})
	}
	callers.Wait()
	stop.Store(true)
	wg.Wait()
	assert.Zero(t, closed.Load(), "ErrClosed from an open group (%d successes)", ok.Load())
}

// A call refused because Close came first is a refusal (Rejected.Closed),
// not an outcome: Successes, Failures and Ignored add up to the calls that
// ran.
func TestACallRefusedByCloseIsNoOutcome(t *testing.T) {
	for iter := range 300 {
		// A timeout out of reach: on a loaded machine an admitted call can
		// wait past a second for its goroutine to run, and would time out
		// unstarted (Ignored too, but not what this test looks for).
		ex, err := executor.New("cl", executor.Config{Slots: 1000, InvocationTimeout: time.Minute,
			Breaker: breaker.Config{ResetTimeout: 2 * time.Minute}})
		require.NoError(t, err)
		var accepted atomic.Uint64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 4 {
			wg.Go(func() {
				<-start
				for range 50 {
					f, err := executor.Submit(context.Background(), ex, func(context.Context) (int, error) { return 1, nil })
					if err != nil {
						continue
					}
					accepted.Add(1)
					_, _ = f.Await(context.Background())
				}
			})
		}
		close(start)
		// Close after a varying number of calls (0 to 19 of the 200), so
		// that it meets the submitters at every stage.
		for accepted.Load() < uint64(iter%20) {
			runtime.Gosched()
		}
		require.NoError(t, ex.Close(context.Background()))
		wg.Wait()
		st := ex.Stats()
		require.Zero(t, st.Ignored, "iteration %d: every call that ran succeeded; refused %d", iter, st.Rejected.Closed)
		require.Equal(t, accepted.Load(), st.Successes, "iteration %d", iter)
	}
}
