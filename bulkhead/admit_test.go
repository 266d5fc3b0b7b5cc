package bulkhead_test

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/bulkhead"
)

// TestDistribution admits load blocking calls, checks how they split into
// executing, queued and refused, then completes them one at a time and
// checks that queued calls start in FIFO order and every count returns to 0.
func TestDistribution(t *testing.T) {
	tests := []struct {
		name               string
		slots, queue, load int
		cancel             []int // ids of queued calls to cancel before completing
	}{
		{"fewer calls than slots all execute", 5, 0, 3, nil},
		{"one call more than the slots is refused without a queue", 3, 0, 4, nil},
		{"a one-place queue takes one call and the last is refused", 3, 1, 5, nil},
		{"slots and queue together take exactly the load", 5, 3, 8, nil},
		{"cancelled waiters are skipped when slots free up", 6, 3, 9, []int{7}},
		{"a long queue behind one slot survives cancellations", 1, 6, 5, []int{1, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, config{Slots: tt.slots, Queue: tt.queue})
				var (
					mu      sync.Mutex
					started []int // ids in the order their functions began
				)
				startedNow := func() []int {
					mu.Lock()
					defer mu.Unlock()
					return slices.Clone(started)
				}
				gates := make([]chan struct{}, tt.load)
				calls := make([]*call, tt.load)
				admitted := map[bulkhead.Admission][]int{}
				for id := range tt.load {
					gates[id] = make(chan struct{})
					calls[id] = h.newCall(id, func() error {
						mu.Lock()
						started = append(started, id)
						mu.Unlock()
						<-gates[id]
						return nil
					})
					adm := h.submit(calls[id])
					admitted[adm] = append(admitted[adm], id)
				}
				synctest.Wait()

				wantExec := min(tt.load, tt.slots)
				wantQueued := min(tt.queue, max(tt.load-tt.slots, 0))
				wantRefused := tt.load - wantExec - wantQueued
				assert.Len(t, admitted[bulkhead.Acquired], wantExec, "executing")
				assert.Len(t, admitted[bulkhead.Queued], wantQueued, "queued")
				assert.Len(t, admitted[bulkhead.Full], wantRefused, "refused")
				assert.ElementsMatch(t, admitted[bulkhead.Acquired], startedNow(), "started")
				assert.Equal(t, stats{
					InUse: wantExec, Free: tt.slots - wantExec, Queued: wantQueued,
					Slots: tt.slots, QueueCap: tt.queue, LowWater: tt.queue / 2,
				}, h.b.Stats())

				for _, id := range tt.cancel {
					require.True(t, h.b.Cancel(&calls[id].Waiter), "Cancel(%d)", id)
					calls[id].cancelled.Store(true)
				}
				assert.Equal(t, wantQueued-len(tt.cancel), h.b.Stats().Queued, "queued after cancel")

				// Complete the oldest running call, one at a time. Each
				// completion must start exactly the oldest live waiter.
				wantPromoted := slices.DeleteFunc(slices.Clone(admitted[bulkhead.Queued]),
					func(id int) bool { return slices.Contains(tt.cancel, id) })
				var promoted []int
				for i := 0; i < len(startedNow()); i++ {
					id := startedNow()[i]
					close(gates[id])
					<-calls[id].done
					synctest.Wait()
					if now := startedNow(); len(now) > wantExec+len(promoted) {
						require.Len(t, now, wantExec+len(promoted)+1, "one completion starts one waiter")
						promoted = append(promoted, now[len(now)-1])
					}
					st := h.b.Stats()
					assert.LessOrEqual(t, st.InUse, tt.slots)
					assert.Equal(t, st.InUse, h.inFlightNow(), "in use vs running")
				}
				assert.Equal(t, wantPromoted, promoted, "promotion order")
				assert.Equal(t, stats{
					Free: tt.slots, Slots: tt.slots, QueueCap: tt.queue, LowWater: tt.queue / 2,
				}, h.b.Stats())
				for _, id := range tt.cancel {
					assert.False(t, calls[id].ran.Load(), "cancelled call %d ran", id)
				}
				assert.Zero(t, h.overLimit.Load())
				require.NoError(t, h.pool.Close(t.Context()))
			})
		})
	}
}

func (h *harness) inFlightNow() int { return int(h.inFlight.Load()) }

func TestCancelFreesThePlaceAndTheTaskNeverRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, config{Slots: 1, Queue: 1})
		gate := make(chan struct{})
		first := h.newCall(0, func() error { <-gate; return nil })
		second := h.newCall(1, func() error { return nil })
		third := h.newCall(2, func() error { return nil })
		require.Equal(t, bulkhead.Acquired, h.submit(first))
		require.Equal(t, bulkhead.Queued, h.submit(second))
		require.Equal(t, bulkhead.Full, h.submit(third), "the queue is full")

		require.True(t, h.b.Cancel(&second.Waiter))
		second.cancelled.Store(true)
		assert.False(t, h.b.Cancel(&second.Waiter), "a second Cancel finds nothing")
		assert.Equal(t, 0, h.b.Stats().Queued)
		require.Equal(t, bulkhead.Queued, h.submit(third), "the freed place is taken")

		close(gate)
		<-first.done
		<-third.done
		synctest.Wait()
		assert.False(t, second.ran.Load(), "the cancelled call ran")
		assert.True(t, third.ran.Load())
		assert.Equal(t, 0, h.b.Stats().InUse)
		require.NoError(t, h.pool.Close(t.Context()))
	})
}

func TestTryAcquireNeverJumpsTheQueue(t *testing.T) {
	b, err := bulkhead.New(config{Slots: 1, Queue: 2})
	require.NoError(t, err)
	require.True(t, b.TryAcquire())
	var w bulkhead.Waiter
	require.Equal(t, bulkhead.Queued, b.Admit(&w))
	assert.False(t, b.TryAcquire(), "TryAcquire while a waiter is queued")
	assert.Equal(t, bulkhead.Full, b.Admit(nil), "Admit(nil) while a waiter is queued")
	assert.Same(t, &w, b.Release(), "the slot goes to the waiter")
	assert.Equal(t, stats{InUse: 1, Slots: 1, QueueCap: 2, LowWater: 1}, b.Stats())
	assert.Nil(t, b.Release())
	assert.PanicsWithValue(t, "bulkhead: Release without Acquire", func() { b.Release() })
}

// Full agrees with Admit(nil) and Admit(w): true exactly when both refuse.
func TestFullIsWhenAdmitRefuses(t *testing.T) {
	for _, queue := range []int{0, 2} {
		b, err := bulkhead.New(config{Slots: 2, Queue: queue})
		require.NoError(t, err)
		ws := make([]bulkhead.Waiter, 2+queue)
		for i := range ws {
			assert.False(t, b.Saturated(), "queue %d: full with %d admitted", queue, i)
			require.NotEqual(t, bulkhead.Full, b.Admit(&ws[i]))
		}
		assert.True(t, b.Saturated(), "queue %d: not full with every slot and place taken", queue)
		assert.Equal(t, bulkhead.Full, b.Admit(&bulkhead.Waiter{}))
		b.Release()
		assert.False(t, b.Saturated(), "queue %d: a release frees a slot, or a queue place by handing its slot over", queue)
	}
}

func TestAdmitOfAQueuedWaiterPanics(t *testing.T) {
	b, err := bulkhead.New(config{Slots: 1, Queue: 2})
	require.NoError(t, err)
	require.True(t, b.TryAcquire())
	var w bulkhead.Waiter
	require.Equal(t, bulkhead.Queued, b.Admit(&w))
	assert.PanicsWithValue(t, "bulkhead: Admit of a Waiter that is already queued", func() { b.Admit(&w) })
}

func TestDrainedFollowsTheLowWaterMark(t *testing.T) {
	tests := []struct {
		name        string
		cfg         config
		queued      int
		wantDrained bool
	}{
		{"no queue is always drained", config{Slots: 1}, 0, true},
		{"an empty queue is drained", config{Slots: 1, Queue: 4}, 0, true},
		{"a queue at its low water is drained", config{Slots: 1, Queue: 4}, 2, true},
		{"a queue above its low water is not drained", config{Slots: 1, Queue: 4}, 3, false},
		{"a full one-place queue is not drained", config{Slots: 1, Queue: 1}, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := bulkhead.New(tt.cfg)
			require.NoError(t, err)
			require.True(t, b.TryAcquire())
			ws := make([]bulkhead.Waiter, tt.queued)
			for i := range ws {
				require.Equal(t, bulkhead.Queued, b.Admit(&ws[i]))
			}
			assert.Equal(t, tt.wantDrained, b.Drained())
		})
	}
}

func TestAdmissionString(t *testing.T) {
	assert.Equal(t, "Acquired", bulkhead.Acquired.String())
	assert.Equal(t, "Queued", bulkhead.Queued.String())
	assert.Equal(t, "Full", bulkhead.Full.String())
	assert.Equal(t, "Admission(9)", bulkhead.Admission(9).String())
}
