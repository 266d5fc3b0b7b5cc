package executor_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/priority"
)

// leases takes n leases with the priority p, and reports how many it got;
// the ones it got are ended at the test's end.
func leases(t *testing.T, ex *executor.Executor, p priority.Priority, n int) int {
	t.Helper()
	got := 0
	for range n {
		l, err := ex.Lease(priority.With(t.Context(), p))
		if err != nil {
			require.ErrorIs(t, err, executor.ErrBusy)
			continue
		}
		got++
		t.Cleanup(func() { l.Done(nil) })
	}
	return got
}

func TestCriticalShareDividesTheSlots(t *testing.T) {
	t.Run("sheddable calls get half of the unreserved slots, default ones the unreserved, critical ones all", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// 10 slots, a share of 0.2: 2 reserved, default below 8, sheddable below 4.
			ex := newExecutor(t, executor.Config{Slots: 10, CriticalShare: 0.2})
			assert.Equal(t, 4, leases(t, ex, priority.Sheddable, 6), "sheddable calls stop at 4 held slots")
			assert.Equal(t, 4, leases(t, ex, priority.Default, 6), "default calls stop at 8")
			assert.Equal(t, 0, leases(t, ex, priority.Sheddable, 1))
			assert.Equal(t, 2, leases(t, ex, priority.Critical, 3), "critical calls take the reserve, and no more")
			st := ex.Stats()
			assert.Equal(t, 10, st.InUse)
			assert.Equal(t, uint64(3+2+1), st.Rejected.Busy, "refusals for a priority are busy ones")
			assert.Equal(t, [priority.Levels]uint64{priority.Default: 2, priority.Critical: 1, priority.Sheddable: 3}, st.RejectedByPriority)
			assert.Equal(t, breaker.Closed, st.Breaker.State, "a priority's refusal never trips the breaker")
		})
	})
	t.Run("a background burst leaves the foreground its slots", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{Slots: 100, CriticalShare: 0.1})
			assert.Equal(t, 45, leases(t, ex, priority.Sheddable, 1000), "the batch job holds at most half of the unreserved 90")
			assert.Equal(t, 45, leases(t, ex, priority.Default, 45), "every interactive request finds a slot")
			assert.Equal(t, 10, leases(t, ex, priority.Critical, 10))
			assert.Equal(t, uint64(955), ex.Stats().RejectedByPriority[priority.Sheddable])
		})
	})
	t.Run("without a share every priority is admitted alike, and refusals are counted by priority", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{Slots: 4})
			assert.Equal(t, 4, leases(t, ex, priority.Sheddable, 4))
			assert.Equal(t, 0, leases(t, ex, priority.Critical, 2))
			_, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) { return 1, nil })
			require.ErrorIs(t, err, executor.ErrBusy)
			assert.Equal(t, [priority.Levels]uint64{priority.Default: 1, priority.Critical: 2}, ex.Stats().RejectedByPriority)
		})
	})
	t.Run("a single slot is everyone's", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{Slots: 1, CriticalShare: 0.5})
			assert.Equal(t, 1, leases(t, ex, priority.Sheddable, 1))
		})
	})
	t.Run("Reconfigure changes the share of the calls that follow", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{Slots: 10})
			require.NoError(t, ex.Reconfigure(executor.Config{Slots: 10, CriticalShare: 0.5}))
			assert.Equal(t, 2, leases(t, ex, priority.Sheddable, 5), "half of the 5 unreserved slots")
			require.NoError(t, ex.Reconfigure(executor.Config{Slots: 10}))
			assert.Equal(t, 3, leases(t, ex, priority.Sheddable, 3))
		})
	})
}

func TestCriticalShareIsValidated(t *testing.T) {
	for _, s := range []float64{-0.1, 0.95, math.NaN(), math.Inf(1)} {
		_, err := executor.New("payments", executor.Config{CriticalShare: s})
		require.ErrorContains(t, err, "CriticalShare must be in [0, 0.9]")
	}
}

func TestRejectedErrorRetryAfter(t *testing.T) {
	t.Run("an open breaker tells the time to its probe", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{Breaker: breaker.Config{ResetTimeout: 10 * time.Second}})
			ex.Breaker().Trip(breaker.Manual)
			time.Sleep(3 * time.Second)
			_, err := ex.Lease(t.Context())
			var re *executor.RejectedError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, 7*time.Second, re.RetryAfter())
		})
	})
	t.Run("a busy bulkhead tells a short wait, a closed executor none", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{Slots: 1})
			leases(t, ex, priority.Default, 1)
			_, err := ex.Lease(t.Context())
			var re *executor.RejectedError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, time.Second, re.RetryAfter())

			ex.Breaker().ForceOpen()
			_, err = ex.Lease(t.Context())
			require.ErrorAs(t, err, &re)
			assert.Zero(t, re.RetryAfter(), "forced open: no probe time")
			assert.Zero(t, (&executor.RejectedError{Reason: executor.RejectedOpen}).RetryAfter(), "made outside an executor")
		})
	})
}
