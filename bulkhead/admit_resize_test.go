package bulkhead_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/bulkhead"
)

func TestResizeHandsSlotsToWaiters(t *testing.T) {
	t.Run("growing hands the new slots to the oldest waiters", func(t *testing.T) {
		b, err := bulkhead.New(config{Slots: 1, Queue: 3})
		require.NoError(t, err)
		require.True(t, b.TryAcquire())
		ws := []*bulkhead.Waiter{{Value: 1}, {Value: 2}, {Value: 3}}
		for _, w := range ws {
			require.Equal(t, bulkhead.Queued, b.Admit(w))
		}
		handed, err := b.Resize(config{Slots: 3, Queue: 3})
		require.NoError(t, err)
		require.Len(t, handed, 2)
		assert.Equal(t, []any{1, 2}, []any{handed[0].Value, handed[1].Value}, "oldest first")
		s := b.Stats()
		assert.Equal(t, stats{InUse: 3, Free: 0, Queued: 1, Slots: 3, QueueCap: 3, LowWater: 1}, s)
		assert.Same(t, ws[2], b.Release(), "the last waiter gets the next freed slot")
	})
	t.Run("shrinking lets the calls in flight finish and hands nothing over until below the new size", func(t *testing.T) {
		b, err := bulkhead.New(config{Slots: 4, Queue: 2})
		require.NoError(t, err)
		for range 4 {
			require.True(t, b.TryAcquire())
		}
		w := &bulkhead.Waiter{}
		require.Equal(t, bulkhead.Queued, b.Admit(w))
		_, err = b.Resize(config{Slots: 2, Queue: 2})
		require.NoError(t, err)
		s := b.Stats()
		assert.Equal(t, 4, s.InUse)
		assert.Equal(t, 0, s.Free)
		assert.Equal(t, 2, s.Slots)
		assert.False(t, b.TryAcquire())
		assert.Nil(t, b.Release(), "4 in use, 2 slots: the slot is freed, not handed over")
		assert.Nil(t, b.Release())
		assert.Equal(t, 2, b.Stats().InUse)
		assert.Same(t, w, b.Release(), "at the new size, a release hands over again")
		assert.Equal(t, 2, b.Stats().InUse)
	})
	t.Run("a smaller queue keeps its waiters and refuses new ones", func(t *testing.T) {
		b, err := bulkhead.New(config{Slots: 1, Queue: 3})
		require.NoError(t, err)
		require.True(t, b.TryAcquire())
		for range 3 {
			require.Equal(t, bulkhead.Queued, b.Admit(&bulkhead.Waiter{}))
		}
		_, err = b.Resize(config{Slots: 1, Queue: 1})
		require.NoError(t, err)
		assert.Equal(t, 3, b.Stats().Queued)
		assert.Equal(t, bulkhead.Full, b.Admit(&bulkhead.Waiter{}))
		assert.True(t, b.Drained() == false)
	})
}
