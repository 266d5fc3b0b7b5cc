package bulkhead_test

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/bulkhead"
)

// TestCapacityIsNeverExceeded hammers one bulkhead from 64 goroutines with
// calls that succeed, fail, panic or are cancelled while queued, and checks
// inside every task that no more than Slots calls run at once.
func TestCapacityIsNeverExceeded(t *testing.T) {
	const (
		workers = 64
		size    = 4
	)
	ops := stressOps
	if testing.Short() {
		ops /= 10
	}
	h := newHarness(t, config{Slots: size, Queue: 8})
	var (
		wg                                     sync.WaitGroup
		ran, refused, queued, cancelled, raced atomic.Int64
	)
	for g := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 42))
			var kind int
			// One call per goroutine, reused: each op waits for its
			// call to finish or to be cancelled before the next.
			c := h.newCall(g, func() error {
				runtime.Gosched() // hold the slot a little
				switch kind {
				case 1:
					return errPlanned
				case 2:
					panic("planned panic")
				}
				return nil
			})
			for range ops {
				kind = rng.IntN(4) // success, error, panic, cancel
				switch h.submit(c) {
				case bulkhead.Full:
					refused.Add(1)
					continue
				case bulkhead.Queued:
					queued.Add(1)
					if kind == 3 {
						if h.b.Cancel(&c.Waiter) {
							cancelled.Add(1)
							continue
						}
						raced.Add(1) // handed a slot first: it runs
					}
				}
				<-c.done
				ran.Add(1)
				switch kind {
				case 1:
					assert.ErrorIs(t, c.err, errPlanned)
				case 2:
					assert.EqualError(t, c.err, "panic: planned panic")
				default:
					assert.NoError(t, c.err)
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, h.pool.Close(t.Context()))

	t.Logf("ops=%d ran=%d refused=%d queued=%d cancelled=%d cancel-lost-race=%d",
		workers*ops, ran.Load(), refused.Load(), queued.Load(), cancelled.Load(), raced.Load())
	assert.Zero(t, h.overLimit.Load(), "times in-flight exceeded %d", size)
	assert.Equal(t, int64(workers*ops), ran.Load()+refused.Load()+cancelled.Load())
	assert.Equal(t, ran.Load(), h.runs.Load(), "tasks run, cancelled ones included")
	st := h.b.Stats()
	assert.Zero(t, st.InUse, "in use after draining")
	assert.Zero(t, st.Queued, "queued after draining")
	assert.Equal(t, size, st.Free)
}

// TestCancelRacingReleaseHasOneWinner runs Cancel and Release against each
// other on a queued waiter: exactly one of "removed" and "handed the slot"
// must happen.
func TestCancelRacingReleaseHasOneWinner(t *testing.T) {
	b, err := bulkhead.New(config{Slots: 1, Queue: 1})
	require.NoError(t, err)
	var removedWins, grantedWins int
	for range raceRounds {
		require.True(t, b.TryAcquire())
		var w bulkhead.Waiter
		require.Equal(t, bulkhead.Queued, b.Admit(&w))

		var (
			wg      sync.WaitGroup
			removed bool
			granted *bulkhead.Waiter
		)
		start := make(chan struct{})
		wg.Go(func() { <-start; removed = b.Cancel(&w) })
		wg.Go(func() { <-start; granted = b.Release() })
		close(start)
		wg.Wait()

		switch {
		case removed && granted == nil:
			removedWins++ // Release freed the slot
		case !removed && granted == &w:
			grantedWins++ // w owns the slot: its work releases it
			require.Nil(t, b.Release())
		default:
			t.Fatalf("Cancel = %v and Release = %p for waiter %p: want exactly one winner", removed, granted, &w)
		}
		require.Equal(t, stats{Free: 1, Slots: 1, QueueCap: 1}, b.Stats())
	}
	t.Logf("Cancel won %d times, Release won %d times", removedWins, grantedWins)
}

// TestAwaitAndResubmitIsNeverRefused runs calls back to back on one slot
// through the pool: since the slot is released before the caller learns
// the result, the next submit always finds it free.
func TestAwaitAndResubmitIsNeverRefused(t *testing.T) {
	cycles := sequentialCycles
	if testing.Short() {
		cycles /= 10
	}
	h := newHarness(t, config{Slots: 1})
	c := h.newCall(0, func() error { return nil })
	refused := 0
	for range cycles {
		if h.submit(c) != bulkhead.Acquired {
			refused++
			continue
		}
		<-c.done
	}
	require.NoError(t, h.pool.Close(t.Context()))
	assert.Zero(t, refused, "refusals in %d cycles", cycles)
	assert.Zero(t, h.b.Stats().InUse)
}

const (
	stressOps        = 10_000
	raceRounds       = 10_000
	sequentialCycles = 100_000
)
