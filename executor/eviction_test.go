package executor_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// serving records which executors are running calls right now.
type serving struct {
	mu      sync.Mutex
	running map[*executor.Executor]int
	overlap atomic.Int64 // times two executors ran calls at once
}

func (s *serving) enter(ex *executor.Executor) {
	s.mu.Lock()
	s.running[ex]++
	if len(s.running) > 1 {
		s.overlap.Add(1)
	}
	s.mu.Unlock()
}

func (s *serving) leave(ex *executor.Executor) {
	s.mu.Lock()
	if s.running[ex]--; s.running[ex] == 0 {
		delete(s.running, ex)
	}
	s.mu.Unlock()
}

// Issue 10.3: a Submit that slipped in after a sweep decided an executor
// was idle, but before it was closed, ran on the evicted executor while a
// fresh one served the same name, so the name could exceed its Slots.
// The race needs real time to pass (a 1µs IdleTimeout), so this test runs
// outside synctest, bounded in count and time.
func TestEvictionNeverLetsTwoExecutorsServeOneName(t *testing.T) {
	g := newGroup(t, executor.GroupConfig{IdleTimeout: time.Microsecond,
		Default: executor.Config{Slots: 64}})
	s := &serving{running: map[*executor.Executor]int{}}
	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := 0; i < 20000 && time.Now().Before(deadline) && s.overlap.Load() == 0; i++ {
				// A lookup then Submit, as SubmitIn does, so that the test
				// knows which executor each call runs on.
				ex, err := g.Executor("a")
				require.NoError(t, err)
				f, err := executor.Submit(context.Background(), ex, func(context.Context) (int, error) {
					s.enter(ex)
					runtime.Gosched()
					s.leave(ex)
					return 1, nil
				})
				if err == nil {
					f.Await(context.Background())
				}
			}
		})
	}
	wg.Wait()
	assert.Zero(t, s.overlap.Load(), "got calls running on two executors of one name at once")
	require.NoError(t, g.Close(context.Background()))
}

// A lookup never hands out an executor that its own sweep evicts (and
// closes) a moment later.
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

// Group.Close waited without bound for an evicted executor
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
		_, err = resultNow(f)
		assert.ErrorIs(t, err, executor.ErrClosed)
		close(release)
		require.NoError(t, g.Close(context.Background()))
	})
}
