package breaker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 10.9: a backlog used to be drained by deleting from the front of a
// slice, moving every pending event once per delivery (O(n²) in all).
// Delivering one event must not move the others.
func TestDeliveringABacklogMovesNoPendingEvent(t *testing.T) {
	const n = 50
	d := &delivery{next: 1}
	var delivered []uint64
	var last *Event
	moved := 0
	var listener func(Event)
	listener = func(e Event) {
		delivered = append(delivered, e.Generation)
		if e.Generation == 1 {
			// A listener that causes transitions builds a backlog: it is
			// queued behind the delivery in progress.
			for g := uint64(2); g <= n; g++ {
				d.publish(listener, Event{Generation: g})
			}
			last = &d.pending[len(d.pending)-1]
			require.Equal(t, uint64(n), last.Generation)
			return
		}
		if e.Generation < n && last.Generation != n {
			moved++ // the slot of the last event now holds another one
		}
	}
	d.publish(listener, Event{Generation: 1})
	assert.Zero(t, moved, "got the pending events moved during %d deliveries, want none moved", n)
	require.Len(t, delivered, n)
	for i, g := range delivered {
		assert.Equal(t, uint64(i+1), g, "events are delivered in generation order")
	}
	d.mu.Lock()
	assert.Empty(t, d.pending[d.head:], "nothing is left pending")
	d.mu.Unlock()
}
