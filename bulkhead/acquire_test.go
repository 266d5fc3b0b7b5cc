package bulkhead_test

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/bulkhead"
)

// acquireAsync starts Acquire on its own goroutine and returns its result
// channel.
func acquireAsync(ctx context.Context, b *bulkhead.Bulkhead) <-chan error {
	res := make(chan error, 1)
	go func() { res <- b.Acquire(ctx) }()
	return res
}

func TestAcquireBlocksUntilASlotIsHandedOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := bulkhead.New(bulkhead.Config{Slots: 1, Queue: 2})
		require.NoError(t, err)
		require.NoError(t, b.Acquire(t.Context()), "a free slot is taken at once")

		first := acquireAsync(t.Context(), b)
		synctest.Wait()
		second := acquireAsync(t.Context(), b)
		synctest.Wait()
		assert.Equal(t, 2, b.Stats().Queued)
		assert.ErrorIs(t, b.Acquire(t.Context()), bulkhead.ErrFull, "slot and queue are full")
		require.Empty(t, first)

		b.Release() // wakes the oldest Acquire
		synctest.Wait()
		require.NoError(t, <-first, "the oldest waiter gets the slot")
		require.Empty(t, second)
		assert.Equal(t, bulkhead.Stats{InUse: 1, Queued: 1, Slots: 1, QueueCap: 2, LowWater: 1}, b.Stats())

		b.Release()
		require.NoError(t, <-second)
		b.Release()
		assert.Equal(t, 0, b.Stats().InUse)
	})
}

func TestAcquireWithoutQueueFailsAtOnce(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{Slots: 1})
	require.NoError(t, err)
	require.True(t, b.TryAcquire())
	assert.ErrorIs(t, b.Acquire(t.Context()), bulkhead.ErrFull)
	assert.Equal(t, bulkhead.Stats{InUse: 1, Slots: 1}, b.Stats())
}

func TestAcquireGivesUpWhenTheContextEnds(t *testing.T) {
	tests := []struct {
		name        string
		cancel      bool // cancel at once, else wait for the deadline
		wantErr     error
		wantElapsed time.Duration // in the bubble's fake time
	}{
		{"a cancelled context removes the waiter", true, context.Canceled, 0},
		{"an expired deadline removes the waiter", false, context.DeadlineExceeded, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, err := bulkhead.New(bulkhead.Config{Slots: 1, Queue: 1})
				require.NoError(t, err)
				require.True(t, b.TryAcquire())

				start := time.Now()
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				res := acquireAsync(ctx, b)
				synctest.Wait()
				require.Equal(t, 1, b.Stats().Queued)

				if tt.cancel {
					cancel()
				}
				require.ErrorIs(t, <-res, tt.wantErr)
				assert.Equal(t, tt.wantElapsed, time.Since(start), "waited")
				assert.Equal(t, bulkhead.Stats{InUse: 1, Slots: 1, QueueCap: 1}, b.Stats(),
					"only the first slot is held and the queue is empty")
				b.Release() // nobody is left to hand the slot to
				assert.Equal(t, 0, b.Stats().InUse)
			})
		})
	}
}

func TestAcquireWithADoneContextFailsEvenWithAFreeSlot(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{Slots: 1})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, b.Acquire(ctx), context.Canceled)
	assert.Equal(t, 0, b.Stats().InUse)
}

func TestAcquireWithANilContextIsAnError(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{Slots: 1})
	require.NoError(t, err)
	//lint:ignore SA1012 the nil context is the point
	assert.ErrorContains(t, b.Acquire(nil), "nil context")
	assert.Equal(t, 0, b.Stats().InUse)
}

// TestAcquireRacingItsContextHoldsASlotOnlyOnSuccess lets the hand-over and
// the end of the context race: whichever wins, a nil error means one slot
// is held and an error means none is.
func TestAcquireRacingItsContextHoldsASlotOnlyOnSuccess(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{Slots: 1, Queue: 1})
	require.NoError(t, err)
	for range 10_000 / 10 {
		require.True(t, b.TryAcquire())
		ctx, cancel := context.WithCancel(t.Context())
		res := acquireAsync(ctx, b)
		for b.Stats().Queued == 0 {
			runtime.Gosched()
		}
		go cancel()
		b.Release()
		if err := <-res; err == nil {
			require.Equal(t, 1, b.Stats().InUse, "Acquire succeeded")
			b.Release()
		} else {
			require.ErrorIs(t, err, context.Canceled)
		}
		require.Equal(t, bulkhead.Stats{Free: 1, Slots: 1, QueueCap: 1}, b.Stats())
		cancel()
	}
}
