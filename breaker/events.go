package breaker

import (
	"cmp"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
)

// delivery hands events to the listener one at a time, in generation order.
//
// Transitions happen by CAS on many goroutines, and the winner of generation
// n+1 can reach publish before the winner of n. So events wait in pending,
// sorted by generation, and whoever finds no delivery running becomes the
// deliverer: it hands over every event whose generation is next, calling the
// listener without holding mu (so the listener may call back into the
// breaker, even transition it: that event is queued and delivered after the
// current one returns). A gap means the winner of that generation has not
// published yet; it will, and will deliver the rest.
type delivery struct {
	mu      sync.Mutex
	pending []Event // sorted by Generation
	next    uint64  // generation of the next event to deliver
	busy    bool    // someone is delivering
}

func (d *delivery) publish(listener func(Event), e Event) {
	d.mu.Lock()
	i, _ := slices.BinarySearchFunc(d.pending, e.Generation, func(p Event, g uint64) int {
		return cmp.Compare(p.Generation, g)
	})
	d.pending = slices.Insert(d.pending, i, e)
	if d.busy {
		d.mu.Unlock()
		return
	}
	d.busy = true
	for len(d.pending) > 0 && d.pending[0].Generation == d.next {
		e := d.pending[0]
		d.pending = slices.Delete(d.pending, 0, 1)
		d.next++
		d.mu.Unlock()
		deliver(listener, e)
		d.mu.Lock()
	}
	d.busy = false
	d.mu.Unlock()
}

// deliver calls the listener. A listener runs inside a caller's Done or
// Allow, on the hot path of some request: if it panics (a logging hook with
// a bug), the panic is recovered and logged with its stack through
// log/slog's default logger, and the breaker and the caller carry on.
func deliver(listener func(Event), e Event) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("fusebox: breaker transition listener panicked",
				"event", e.String(), "panic", v, "stack", string(debug.Stack()))
		}
	}()
	listener(e)
}
