package executor_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
// fresh one served the same name, so the name could exceed its Workers.
// The race needs real time to pass (a 1µs IdleTimeout), so this test runs
// outside synctest, bounded in count and time.
func TestEvictionNeverLetsTwoExecutorsServeOneName(t *testing.T) {
	g := newGroup(t, executor.GroupConfig{IdleTimeout: time.Microsecond,
		Default: executor.Config{Workers: 64}})
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
