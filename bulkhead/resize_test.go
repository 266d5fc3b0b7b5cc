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
	t.Run("growing wakes blocked Acquire calls", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b, err := bulkhead.New(bulkhead.Config{Slots: 1, Queue: 1})
			require.NoError(t, err)
			require.True(t, b.TryAcquire())
			res := acquireAsync(t.Context(), b)
			synctest.Wait()
			require.NoError(t, resizeAcquired(t, b, bulkhead.Config{Slots: 2, Queue: 1}))
			synctest.Wait()
			require.NoError(t, <-res)
			assert.Equal(t, 2, b.Stats().InUse)
		})
	})
	t.Run("shrinking lets the slots in use go back before new ones are taken", func(t *testing.T) {
		b, err := bulkhead.New(bulkhead.Config{Slots: 4})
		require.NoError(t, err)
		for range 4 {
			require.True(t, b.TryAcquire())
		}
		require.NoError(t, resizeAcquired(t, b, bulkhead.Config{Slots: 2}))
		assert.Equal(t, bulkhead.Stats{InUse: 4, Free: 0, Slots: 2}, b.Stats())
		assert.False(t, b.TryAcquire())
		b.Release()
		b.Release()
		assert.False(t, b.TryAcquire(), "2 in use, 2 slots")
		b.Release()
		assert.True(t, b.TryAcquire(), "1 in use, 2 slots")
	})
	t.Run("an invalid size changes nothing and fails as New does", func(t *testing.T) {
		b, err := bulkhead.New(bulkhead.Config{Slots: 2, Queue: 4})
		require.NoError(t, err)
		bad := bulkhead.Config{Slots: 3, Queue: 2, LowWater: 5}
		_, want := bulkhead.New(bad)
		err = resizeAcquired(t, b, bad)
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
					b.Release()
				}
			}
		})
	}
	for i := range 200 {
		require.NoError(t, resizeAcquired(t, b, bulkhead.Config{Slots: 2 + i%7, Queue: 8}))
	}
	// Settle at 2: the bound is 8 (the largest size) until every slot
	// taken under a larger size is back, then 2.
	require.NoError(t, resizeAcquired(t, b, bulkhead.Config{Slots: 2, Queue: 8}))
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

// resizeAcquired resizes a bulkhead whose callers all use Acquire: Resize
// wakes them itself and returns no Waiter.
func resizeAcquired(t testing.TB, b *bulkhead.Bulkhead, cfg bulkhead.Config) error {
	t.Helper()
	handed, err := b.Resize(cfg)
	assert.Empty(t, handed, "Waiters of Admit from a bulkhead that only Acquire used")
	return err
}
