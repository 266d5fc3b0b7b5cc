package executor_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

func TestLeaseHoldsASlotUntilDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, executor.Config{Slots: 1})
		l, err := ex.Lease(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 1, ex.Stats().InUse, "the lease holds the only slot")
		_, err = executor.Submit(t.Context(), ex, func(context.Context) (int, error) { return 1, nil })
		require.ErrorIs(t, err, executor.ErrBusy, "a call finds no slot while the lease holds it")

		l.Done(nil)
		l.Done(errBoom) // only the first Done counts
		st := ex.Stats()
		assert.Equal(t, 0, st.InUse)
		assert.Equal(t, uint64(1), st.Successes)
		assert.Zero(t, st.Failures)
		require.ErrorIs(t, l.Context().Err(), context.Canceled, "the context ends at Done")
	})
}

func TestLeaseOutcomesReachTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, executor.Config{Breaker: breaker.Config{ConsecutiveFailures: 2}})
		for range 2 {
			l, err := ex.Lease(t.Context())
			require.NoError(t, err)
			l.Done(errBoom)
		}
		assert.Equal(t, breaker.Open, ex.Stats().Breaker.State, "two failed leases trip the breaker")
		_, err := ex.Lease(t.Context())
		require.ErrorIs(t, err, breaker.ErrOpen)
	})
}

func TestLeaseDeadlineRecordsTheTimeoutAndKeepsTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, executor.Config{Slots: 1, InvocationTimeout: time.Second})
		l, err := ex.Lease(t.Context())
		require.NoError(t, err)
		deadline, ok := l.Context().Deadline()
		require.True(t, ok)
		assert.Equal(t, time.Now().Add(time.Second), deadline)

		<-l.Context().Done()
		assert.Equal(t, time.Second, time.Since(deadline.Add(-time.Second)), "ended at the invocation timeout")
		require.ErrorIs(t, l.Context().Err(), context.DeadlineExceeded)
		st := ex.Stats()
		assert.Equal(t, uint64(1), st.Timeouts, "the timeout is recorded at the deadline")
		assert.Equal(t, uint64(1), st.Failures)
		assert.Equal(t, 1, st.Overdue)
		assert.Equal(t, 1, st.InUse, "the slot stays held until Done")

		l.Done(context.DeadlineExceeded)
		st = ex.Stats()
		assert.Equal(t, 0, st.InUse)
		assert.Equal(t, 0, st.Overdue)
		assert.Equal(t, uint64(1), st.Failures, "Done after the deadline records nothing more")
	})
}

func TestLeaseOfACallerWhoCancelsIsIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, executor.Config{})
		ctx, cancel := context.WithCancel(t.Context())
		l, err := ex.Lease(ctx)
		require.NoError(t, err)
		cancel()
		<-l.Context().Done()
		l.Done(l.Context().Err())
		st := ex.Stats()
		assert.Equal(t, uint64(1), st.Cancelled)
		assert.Zero(t, st.Failures)
		assert.Zero(t, st.InUse)

		_, err = ex.Lease(ctx)
		require.ErrorIs(t, err, context.Canceled, "a caller who has given up gets no lease")
		assert.Zero(t, ex.Stats().InUse)
	})
}

func TestLeaseWaitsInTheQueue(t *testing.T) {
	tests := []struct {
		name    string
		release bool // the first lease ends while the second waits
		wantErr error
		wait    time.Duration
	}{
		{"a waiting lease gets the slot the first one gives back", true, nil, 100 * time.Millisecond},
		{"a waiting lease gives up at the queue timeout", false, executor.ErrQueueTimeout, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ex := newExecutor(t, executor.Config{Slots: 1, Queue: 1, QueueTimeout: 500 * time.Millisecond,
					InvocationTimeout: time.Second})
				first, err := ex.Lease(t.Context())
				require.NoError(t, err)
				start := time.Now()
				var (
					second *executor.Lease
					err2   error
					wg     sync.WaitGroup
				)
				wg.Go(func() { second, err2 = ex.Lease(t.Context()) })
				synctest.Wait()
				assert.Equal(t, 1, ex.Stats().Queued)
				if tt.release {
					time.Sleep(tt.wait)
					first.Done(nil)
				}
				wg.Wait()
				assert.Equal(t, tt.wait, time.Since(start), "waited")
				require.ErrorIs(t, err2, tt.wantErr)
				if tt.wantErr == nil {
					assert.Equal(t, 1, ex.Stats().InUse)
					second.Done(nil)
				} else {
					assert.Nil(t, second)
					first.Done(nil)
				}
				assert.Zero(t, ex.Stats().InUse)
			})
		})
	}
}

func TestCloseEndsTheContextOfAnOpenLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := executor.New("payments", executor.Config{InvocationTimeout: time.Minute, Breaker: breaker.Config{ResetTimeout: 2 * time.Minute}})
		require.NoError(t, err)
		l, err := ex.Lease(t.Context())
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		require.Error(t, ex.Close(ctx), "Close gives up on the open lease at its ctx's deadline")
		require.ErrorIs(t, l.Context().Err(), context.Canceled, "the lease's context ends")
		l.Done(nil)
		assert.Zero(t, ex.Stats().InUse)
		require.NoError(t, ex.Close(t.Context()))
	})
}
