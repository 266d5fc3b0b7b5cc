package bulkhead_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/bulkhead"
)

func TestResize(t *testing.T) {
	t.Run("growing hands the new slots to the oldest waiters", func(t *testing.T) {
		b, err := bulkhead.New(bulkhead.Config{Slots: 1, Queue: 3})
		require.NoError(t, err)
		require.True(t, b.TryAcquire())
		ws := []*bulkhead.Waiter{{Value: 1}, {Value: 2}, {Value: 3}}
		for _, w := range ws {
			require.Equal(t, bulkhead.Queued, b.Admit(w))
		}
		handed, err := b.Resize(bulkhead.Config{Slots: 3, Queue: 3})
		require.NoError(t, err)
		require.Len(t, handed, 2)
		assert.Equal(t, []any{1, 2}, []any{handed[0].Value, handed[1].Value}, "oldest first")
		s := b.Stats()
		assert.Equal(t, bulkhead.Stats{InUse: 3, Free: 0, Queued: 1, Slots: 3, QueueCap: 3, LowWater: 1}, s)
		assert.Same(t, ws[2], b.Release(), "the last waiter gets the next freed slot")
	})
	t.Run("growing wakes blocked Acquire calls", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b, err := bulkhead.New(bulkhead.Config{Slots: 1, Queue: 1})
			require.NoError(t, err)
			require.True(t, b.TryAcquire())
			res := acquireAsync(t.Context(), b)
			synctest.Wait()
			handed, err := b.Resize(bulkhead.Config{Slots: 2, Queue: 1})
			require.NoError(t, err)
			assert.Empty(t, handed)
			synctest.Wait()
			require.NoError(t, <-res)
			assert.Equal(t, 2, b.Stats().InUse)
		})
	})
	t.Run("shrinking lets the calls in flight finish and hands nothing over until below the new size", func(t *testing.T) {
		b, err := bulkhead.New(bulkhead.Config{Slots: 4, Queue: 2})
		require.NoError(t, err)
		for range 4 {
			require.True(t, b.TryAcquire())
		}
		w := &bulkhead.Waiter{}
		require.Equal(t, bulkhead.Queued, b.Admit(w))
		_, err = b.Resize(bulkhead.Config{Slots: 2, Queue: 2})
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
		b, err := bulkhead.New(bulkhead.Config{Slots: 1, Queue: 3})
		require.NoError(t, err)
		require.True(t, b.TryAcquire())
		for range 3 {
			require.Equal(t, bulkhead.Queued, b.Admit(&bulkhead.Waiter{}))
		}
		_, err = b.Resize(bulkhead.Config{Slots: 1, Queue: 1})
		require.NoError(t, err)
		assert.Equal(t, 3, b.Stats().Queued)
		assert.Equal(t, bulkhead.Full, b.Admit(&bulkhead.Waiter{}))
		assert.True(t, b.Drained() == false)
	})
	t.Run("an invalid size changes nothing and fails as New does", func(t *testing.T) {
		b, err := bulkhead.New(bulkhead.Config{Slots: 2, Queue: 4})
		require.NoError(t, err)
		bad := bulkhead.Config{Slots: 3, Queue: 2, LowWater: 5}
		_, want := bulkhead.New(bad)
		_, err = b.Resize(bad)
		require.Error(t, err)
		assert.Equal(t, want.Error(), err.Error())
		assert.Equal(t, bulkhead.Stats{Free: 2, Slots: 2, QueueCap: 4, LowWater: 2}, b.Stats())
	})
}

// Workers acquire and release while the size changes under them: the slots
// held never exceed the largest size in force, and once the resizing stops
// at a smaller size, they never exceed that.
func TestResizeUnderLoad(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{Slots: 8, Queue: 8})
	require.NoError(t, err)
	var held, peak atomic.Int64
	var limit atomic.Int64 // the bound in force for the peak check
	limit.Store(8)
	hold := func() {
		n := held.Add(1)
		if n > limit.Load() {
			peak.Store(n)
		}
		held.Add(-1)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := 0; !stop.Load() && i < 20000; i++ {
				if b.TryAcquire() {
					hold()
					if w := b.Release(); w != nil {
						t.Error("no Admit waiter was queued")
					}
				}
			}
		})
	}
	for i := range 200 {
		_, err := b.Resize(bulkhead.Config{Slots: 2 + i%7, Queue: 8})
		require.NoError(t, err)
	}
	// Settle at 2: the bound is 8 (the largest size) until every slot
	// taken under a larger size is back, then 2.
	_, err = b.Resize(bulkhead.Config{Slots: 2, Queue: 8})
	require.NoError(t, err)
	for b.Stats().InUse > 2 {
		runtime.Gosched()
	}
	limit.Store(2)
	peak.Store(0)
	for i := 0; i < 2000; i++ {
		require.LessOrEqual(t, b.Stats().InUse, 2)
		runtime.Gosched()
	}
	stop.Store(true)
	wg.Wait()
	assert.Zero(t, peak.Load(), "slots held above the size in force")
	assert.Equal(t, 0, b.Stats().InUse)
}
