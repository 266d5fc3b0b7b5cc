package executor

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/future"
)

// White-box: the deadline machinery exists only while calls are in flight.
func TestIdleExecutorHoldsNoTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := New("payments", Config{Slots: 2, Queue: 2, InvocationTimeout: time.Second})
		require.NoError(t, err)
		defer ex.Close(context.Background())
		assert.False(t, ex.run.Live(), "nothing before the first call")

		hold := make(chan struct{})
		f1, _ := Submit(t.Context(), ex, func(context.Context) (int, error) { <-hold; return 1, nil })
		f2, _ := Submit(t.Context(), ex, func(context.Context) (int, error) { <-hold; return 1, nil })
		f3, _ := Submit(t.Context(), ex, func(context.Context) (int, error) { return 1, nil }) // queued
		assert.True(t, ex.run.Live(), "a timeline while calls run")
		assert.True(t, ex.queued.Load().Live(), "and one for the queue")
		close(hold)
		for _, f := range []interface {
			Await(context.Context) (int, error)
		}{f1, f2, f3} {
			_, err := f.Await(t.Context())
			require.NoError(t, err)
		}
		time.Sleep(2 * time.Second) // the timers fire once more, find nothing, retire
		assert.False(t, ex.run.Live(), "an idle executor keeps no timeline and no timer")
		assert.False(t, ex.queued.Load().Live())

		// And a new call makes a new one.
		_, err = Do(t.Context(), ex, func(context.Context) (int, error) { return 1, nil })
		require.NoError(t, err)
		assert.True(t, ex.run.Live())
	})
}

// Timeouts still work across retirements: a call made after the timeline
// retired times out on the new one.
func TestTimeoutAfterRetirement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := New("payments", Config{InvocationTimeout: time.Second})
		require.NoError(t, err)
		defer ex.Close(context.Background())
		for range 3 {
			_, err := Do(t.Context(), ex, func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
			require.ErrorIs(t, err, ErrTimeout)
			time.Sleep(10 * time.Second)
			assert.False(t, ex.run.Live())
		}
	})
}

// Many calls timing out, finishing, and being added while the timeline
// retires and while the executor closes: every admitted call's future
// resolves, with its value, a timeout or the close, and nothing is left
// running (goleak in TestMain). Real time, so that the race detector sees
// the goroutines truly interleave; bounded in count and time.
func TestDeadlinesUnderConcurrentAddsRetirementsAndClose(t *testing.T) {
	for round := range 20 {
		ex, err := New("payments", Config{Slots: 64, Queue: 8, InvocationTimeout: time.Millisecond, Breaker: breaker.Config{ResetTimeout: time.Second, ConsecutiveFailures: 1 << 20}})
		require.NoError(t, err)
		var wg sync.WaitGroup
		futures := make(chan *future.Future[int], 4*50)
		for g := range 4 {
			wg.Go(func() {
				for i := range 50 {
					d := time.Duration((g+i+round)%3) * time.Millisecond // 0, 1 or 2 ms: some time out
					f, err := Submit(context.Background(), ex, func(ctx context.Context) (int, error) {
						select {
						case <-time.After(d):
							return 1, nil
						case <-ctx.Done():
							return 0, ctx.Err()
						}
					})
					if err != nil {
						var rej *RejectedError
						require.ErrorAs(t, err, &rej)
						continue
					}
					futures <- f
					if i%10 == 9 {
						time.Sleep(3 * time.Millisecond) // long enough for the timeline to retire
					} else {
						time.Sleep(100 * time.Microsecond)
					}
				}
			})
		}
		time.Sleep(time.Duration(5+round) * time.Millisecond) // the close lands mid-run
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		require.NoError(t, ex.Close(ctx))
		cancel()
		wg.Wait()
		close(futures)
		var ok, timeouts, closed int
		for f := range futures {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			v, err := f.Await(ctx)
			require.NoError(t, ctx.Err(), "round %d: a future never resolved", round)
			cancel()
			switch {
			case err == nil:
				assert.Equal(t, 1, v)
				ok++
			case errors.Is(err, ErrTimeout):
				timeouts++
			case errors.Is(err, ErrClosed):
				closed++
			default:
				t.Errorf("round %d: got %v", round, err)
			}
		}
		t.Logf("round %d: %d ok, %d timed out, %d ended by the close", round, ok, timeouts, closed)
	}
}

// The stuck criterion walks the queue while releases promote its calls:
// what it reads of a queued call must not be what a promotion writes.
// Real time, under the race detector; bounded in count and time. The walk
// is called directly: isStuck itself walks at most once per stuck
// threshold.
func TestStuckCriterionReadsTheQueueWhileCallsArePromoted(t *testing.T) {
	// Timeouts out of reach: the walker spins without a pause, and on a
	// loaded machine a call could wait past a second in the queue or for its
	// goroutine to run, which is not what this test is about.
	ex, err := New("payments", Config{Slots: 1, Queue: 2, InvocationTimeout: time.Minute, Breaker: breaker.Config{ResetTimeout: 3 * time.Minute}})
	require.NoError(t, err)
	stop := make(chan struct{})
	var walks atomic.Int64
	var walker sync.WaitGroup
	walker.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			ex.queued.Load().CountOld(ex.now(), ex.queueTO.Load(), 1<<30)
			walks.Add(1)
		}
	})
	var wg sync.WaitGroup
	var done atomic.Int64
	for range 4 {
		wg.Go(func() {
			for range 300 {
				f, err := Submit(context.Background(), ex, func(context.Context) (int, error) { time.Sleep(20 * time.Microsecond); return 1, nil })
				if err != nil {
					require.True(t, errors.Is(err, ErrSaturated) || errors.Is(err, ErrBusy), "refused: %v", err)
					continue
				}
				_, err = f.Await(context.Background())
				require.NoError(t, err)
				done.Add(1)
			}
		})
	}
	wg.Wait()
	close(stop)
	walker.Wait()
	t.Logf("%d calls, %d walks of the queue", done.Load(), walks.Load())
	assert.Positive(t, done.Load())
	require.NoError(t, ex.Close(context.Background()))
}
