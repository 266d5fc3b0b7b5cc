package bulkhead_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/bulkhead"
)

// A zero Bulkhead, a field of a struct of yours, has no slot until Resize
// sizes it.
func TestAZeroBulkheadIsSizedByResize(t *testing.T) {
	var b bulkhead.Bulkhead
	assert.Equal(t, bulkhead.Full, b.Admit(&bulkhead.Waiter{}), "no slot, no queue")
	assert.True(t, b.Saturated())
	handed, err := b.Resize(bulkhead.Config{Slots: 1})
	require.NoError(t, err)
	assert.Empty(t, handed)
	assert.False(t, b.Saturated())
	require.Equal(t, bulkhead.Acquired, b.Admit(nil))
	assert.True(t, b.Saturated(), "its one slot is taken and it has no queue")
	assert.Nil(t, b.Release())
	assert.Equal(t, bulkhead.Stats{Free: 1, Slots: 1}, b.Stats())
}

// The non-blocking methods of a nil *Bulkhead answer as for one with no
// slots.
func TestNilBulkheadAdmitsNothing(t *testing.T) {
	var b *bulkhead.Bulkhead
	require.NotPanics(t, func() {
		assert.Equal(t, bulkhead.Full, b.Admit(&bulkhead.Waiter{}))
		assert.False(t, b.Cancel(&bulkhead.Waiter{}))
		assert.True(t, b.Saturated())
		assert.True(t, b.Drained())
	})
}

// queuedAcquire starts an Acquire on b that has to wait, and returns its
// result's channel once it is queued.
func queuedAcquire(t *testing.T, b *bulkhead.Bulkhead) <-chan error {
	t.Helper()
	before := b.Stats().Queued
	got := make(chan error, 1)
	go func() { got <- b.Acquire(context.Background()) }()
	synctest.Wait()
	require.Equal(t, before+1, b.Stats().Queued, "the Acquire waits in the queue")
	return got
}

// Callers of Acquire and Waiters of Admit share one FIFO queue: Release
// wakes a waiting Acquire itself and returns only a Waiter of Admit, whose
// work the releaser must start.
func TestAcquireAndAdmitShareOneQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := bulkhead.New(bulkhead.Config{Slots: 1, Queue: 2})
		require.NoError(t, err)
		require.True(t, b.TryAcquire())
		acquired := queuedAcquire(t, b)
		w := &bulkhead.Waiter{Value: "admitted"}
		require.Equal(t, bulkhead.Queued, b.Admit(w))

		assert.Nil(t, b.Release(), "the oldest is the Acquire: woken, not returned")
		require.NoError(t, <-acquired)
		assert.Same(t, w, b.Release(), "the Acquire's slot goes to the Waiter, for the releaser to start")
		assert.Equal(t, bulkhead.Stats{InUse: 1, Slots: 1, QueueCap: 2, LowWater: 1}, b.Stats())
		assert.Nil(t, b.Release())
	})
}

// Resize hands the slots it adds to the oldest in the queue: it wakes
// Acquire calls itself and returns the Waiters of Admit.
func TestResizeWakesAcquireAndReturnsWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := bulkhead.New(bulkhead.Config{Slots: 1, Queue: 3})
		require.NoError(t, err)
		require.True(t, b.TryAcquire())
		w1 := &bulkhead.Waiter{Value: 1}
		require.Equal(t, bulkhead.Queued, b.Admit(w1))
		acquired := queuedAcquire(t, b)
		w2 := &bulkhead.Waiter{Value: 2}
		require.Equal(t, bulkhead.Queued, b.Admit(w2))

		handed, err := b.Resize(bulkhead.Config{Slots: 4, Queue: 3})
		require.NoError(t, err)
		assert.Equal(t, []*bulkhead.Waiter{w1, w2}, handed, "the Waiters, oldest first; not the Acquire")
		require.NoError(t, <-acquired)
		assert.Equal(t, bulkhead.Stats{InUse: 4, Slots: 4, QueueCap: 3, LowWater: 1}, b.Stats())
		for range 4 {
			assert.Nil(t, b.Release())
		}
	})
}
