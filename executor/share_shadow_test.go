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
	"github.com/fusebox-go/fusebox/priority"
)

// A critical share keeps slots that default calls never take, so a hang
// of default calls never fills the bulkhead. It must trip all the same,
// as fast as without a share: the share decides who gets a free slot, not
// whether a stuck bulkhead is evidence against the supplier.
func TestACriticalShareDoesNotHideAHang(t *testing.T) {
	for _, share := range []float64{0, 0.2, 0.5} {
		t.Run("", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newSupplier()
				ex := newExecutor(t, executor.Config{Slots: 10, CriticalShare: share, InvocationTimeout: 30 * time.Second,
					Breaker: breaker.Config{ResetTimeout: 45 * time.Second}})
				warm(t, ex, 50, 100*time.Millisecond)
				s.hang()
				defer s.unhang()
				start := time.Now()
				for ex.Breaker().State() == breaker.Closed && time.Since(start) < 20*time.Second {
					_, _ = executor.Submit(t.Context(), ex, s.cooperative) // 10 calls a second, as in the shop
					time.Sleep(100 * time.Millisecond)
				}
				st := ex.Stats()
				assert.Equal(t, breaker.Open, st.Breaker.State, "CriticalShare %v: a hang trips", share)
				assert.Equal(t, breaker.Saturation, st.Breaker.Reason, "CriticalShare %v: by saturation", share)
				assert.Less(t, time.Since(start), 2*time.Second, "CriticalShare %v: within about a second", share)
			})
		})
	}
}

// With a queue, the shares hold for the queue too: a sheddable call that
// finds every slot held is refused as busy instead of waiting its turn for
// the slots critical calls are promised, and a critical call still queues.
func TestSharesHoldWhenTheSlotsAreFullAndAQueueWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		crit := newSupplier()
		crit.hang()
		ex := newExecutor(t, executor.Config{Slots: 4, Queue: 4, CriticalShare: 0.5,
			InvocationTimeout: 30 * time.Second, QueueTimeout: 20 * time.Second,
			Breaker: breaker.Config{ResetTimeout: time.Minute}})
		cctx := priority.With(t.Context(), priority.Critical)
		sctx := priority.With(t.Context(), priority.Sheddable)
		for range 4 {
			_, err := executor.Submit(cctx, ex, crit.cooperative)
			require.NoError(t, err)
		}
		synctest.Wait()
		for range 4 {
			_, err := executor.Submit(sctx, ex, func(context.Context) (string, error) { return "shed", nil })
			require.ErrorIs(t, err, executor.ErrBusy, "a sheddable call over its share is refused, not queued")
		}
		_, err := executor.Submit(cctx, ex, crit.cooperative)
		require.NoError(t, err, "a critical call queues for its slot")
		st := ex.Stats()
		assert.Equal(t, 1, st.Queued)
		assert.Equal(t, uint64(4), st.Rejected.Busy)
		assert.Equal(t, breaker.Closed, st.Breaker.State, "young calls: busy, not stuck")
		crit.unhang()
	})
}

// Shadow mode refuses nothing, a queue timeout included: a call that waited
// out the queue timeout runs all the same, outside the bulkhead, and the
// timeout enforce mode would have given it is counted.
func TestShadowModeRunsACallThatWaitedOutTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSupplier()
		s.hang()
		defer s.unhang()
		ex := newExecutor(t, executor.Config{Slots: 1, Queue: 1, Shadow: true,
			InvocationTimeout: 10 * time.Second, QueueTimeout: 100 * time.Millisecond,
			Breaker: breaker.Config{ResetTimeout: time.Minute}})
		_, err := executor.Submit(t.Context(), ex, s.cooperative)
		require.NoError(t, err)
		synctest.Wait()
		queued, err := executor.Submit(t.Context(), ex, func(context.Context) (string, error) { return "queued ran", nil })
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 1, ex.Stats().Queued, "it waits in the queue as in enforce mode")
		time.Sleep(200 * time.Millisecond)
		v, err := queued.Await(t.Context())
		require.NoError(t, err, "shadow mode refuses nothing")
		assert.Equal(t, "queued ran", v)
		st := ex.Stats()
		assert.Equal(t, uint64(1), st.QueueTimeouts, "the timeout enforce mode would have given it")
		assert.Equal(t, 1, st.InUse, "it ran outside the bulkhead")
	})
}

// After a trip and a recovery the latency history still holds the
// supplier's healthy latency (a trip never clears it), so each later hang
// trips as fast as the first.
func TestEachHangAfterARecoveryTripsAsFastAsTheFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 4
		s := newSupplier()
		ex := newExecutor(t, executor.Config{Slots: n, InvocationTimeout: 30 * time.Second,
			Breaker: breaker.Config{ResetTimeout: 45 * time.Second}})
		warm(t, ex, 50, 100*time.Millisecond)
		for round := range 3 {
			s.hang()
			fill(t, ex, s, n)
			start := time.Now()
			for ex.Breaker().State() == breaker.Closed {
				time.Sleep(10 * time.Millisecond)
				_, _ = executor.Submit(t.Context(), ex, s.cooperative)
			}
			assert.Less(t, time.Since(start), 2*time.Second, "round %d", round)
			s.unhang()
			time.Sleep(46 * time.Second)
			warm(t, ex, 50, 100*time.Millisecond) // the first is the probe
			require.Equal(t, breaker.Closed, ex.Breaker().State())
		}
	})
}
