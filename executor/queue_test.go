package executor_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/future"
)

// Acceptance 10: an asynchronous supplier behind a queue.
func TestQueueMode(t *testing.T) {
	const workers, queue = 2, 8
	cfg := func(ev *events) executor.Config {
		return executor.Config{Slots: workers, Queue: queue, InvocationTimeout: 10 * time.Second, Stuck: literal,
			QueueTimeout: time.Minute, Breaker: breaker.Config{ResetTimeout: 2 * time.Minute, OnTransition: ev.listen}}
	}
	t.Run("a full queue trips; draining below the low-water mark closes without a probe", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ev := &events{}
			ex := newExecutor(t, cfg(ev))
			// The supplier serves one call per second per worker.
			work := func(context.Context) (int, error) { time.Sleep(time.Second); return 1, nil }
			var fs []*future.Future[int]
			for range workers + queue {
				f, err := executor.Submit(t.Context(), ex, work)
				require.NoError(t, err)
				fs = append(fs, f)
			}
			assert.Equal(t, queue, ex.Stats().Queued)
			_, err := executor.Submit(t.Context(), ex, work)
			require.ErrorIs(t, err, executor.ErrSaturated)
			var rej *executor.RejectedError
			require.ErrorAs(t, err, &rej)
			assert.Equal(t, executor.RejectedQueueFull, rej.Reason)
			st := ex.Stats().Breaker
			assert.Equal(t, breaker.Open, st.State)
			assert.Equal(t, breaker.QueueFull, st.Reason)

			// Each second two calls finish and two queued ones start. The
			// queue holds 8 → 6 → 4: at 4 (LowWater = 8/2) it has drained.
			time.Sleep(time.Second)
			synctest.Wait()
			assert.Equal(t, 6, ex.Stats().Queued)
			assert.Equal(t, breaker.Open, ex.Breaker().State(), "6 > 4: still draining")
			time.Sleep(time.Second)
			synctest.Wait()
			assert.Equal(t, 4, ex.Stats().Queued)
			assert.Equal(t, breaker.Closed, ex.Breaker().State(), "closed at the low-water mark, long before the reset timeout")
			assert.Equal(t, []string{"closed>open:queue-full", "open>closed:queue-drained"}, ev.list())
			_, err = future.All(t.Context(), fs...)
			require.NoError(t, err)
		})
	})
	t.Run("a queue emptied by queue timeouts has not drained", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ev := &events{}
			ex := newExecutor(t, executor.Config{Slots: 1, Queue: 4, InvocationTimeout: 10 * time.Second, QueueTimeout: 2 * time.Second, Stuck: literal,
				Breaker: breaker.Config{ResetTimeout: 20 * time.Second, OnTransition: ev.listen}})
			slow := func(context.Context) (int, error) { time.Sleep(5 * time.Second); return 1, nil } // five times too slow
			for range 5 {
				_, err := executor.Submit(t.Context(), ex, slow)
				require.NoError(t, err)
			}
			_, err := executor.Submit(t.Context(), ex, slow)
			require.ErrorIs(t, err, executor.ErrSaturated)
			time.Sleep(6 * time.Second) // the queue times out; then the one running call succeeds
			synctest.Wait()
			st := ex.Stats()
			assert.Equal(t, uint64(4), st.QueueTimeouts)
			assert.Equal(t, uint64(1), st.Successes)
			assert.Equal(t, breaker.Open, st.Breaker.State, "emptied by timeouts, not by service")
			assert.Equal(t, []string{"closed>open:queue-full"}, ev.list())
		})
	})
	t.Run("stays open while nothing drains", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ev := &events{}
			ex := newExecutor(t, cfg(ev))
			s := newSupplier()
			s.hang()
			defer s.unhang()
			for range workers + queue {
				_, err := executor.Submit(t.Context(), ex, s.cooperative)
				require.NoError(t, err)
			}
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			require.ErrorIs(t, err, executor.ErrSaturated)
			// The dead supplier times every call out: the queue empties, but
			// by timeouts, not by service, and that is not draining.
			time.Sleep(2*time.Minute - time.Nanosecond)
			synctest.Wait()
			assert.Equal(t, breaker.Open, ex.Breaker().State())
			assert.Equal(t, []string{"closed>open:queue-full"}, ev.list())
			assert.Equal(t, uint64(workers+queue), ex.Stats().Timeouts)
		})
	})
}
