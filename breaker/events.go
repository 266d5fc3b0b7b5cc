package breaker

import (
	"cmp"
	"log/slog"
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
	pending []Event // pending[head:] waits, sorted by Generation
	head    int     // events before it were delivered: popping moves nothing
	next    uint64  // generation of the next event to deliver
	busy    bool    // someone is delivering
}

func (d *delivery) publish(listener func(Event), e Event) {
	d.mu.Lock()
	d.insert(e)
	if d.busy {
		d.mu.Unlock()
		return
	}
	d.busy = true
	d.drain(listener)
}

// drain delivers every event whose generation is next, then clears busy.
// It is called with mu held and busy set, and returns with mu released.
//
// A listener that ends its goroutine instead of returning (runtime.Goexit,
// as t.FailNow does in a test's listener) would leave busy set, and no
// event would ever be delivered again. The goroutine still runs its
// deferred calls before it ends: the deferred call here logs it and goes on
// delivering from there, as after a listener that panicked.
func (d *delivery) drain(listener func(Event)) {
	returned := false
	var cur Event
	defer func() {
		if !returned {
			slog.Error("fusebox: breaker transition listener called runtime.Goexit", "event", cur.String())
			d.mu.Lock()
			d.drain(listener)
		}
	}()
	for d.head < len(d.pending) && d.pending[d.head].Generation == d.next {
		cur = d.pop()
		d.next++
		d.mu.Unlock()
		deliver(listener, cur)
		d.mu.Lock()
	}
	d.busy = false
	d.mu.Unlock()
	returned = true
}

// insert puts e in generation order. Events nearly always arrive in order,
// so this is an append; a backlog is compacted only here, once at least
// half of the slice is delivered, so every event is moved O(1) times.
func (d *delivery) insert(e Event) {
	if d.head > 0 && d.head >= len(d.pending)/2 {
		n := copy(d.pending, d.pending[d.head:])
		clear(d.pending[n:])
		d.pending, d.head = d.pending[:n], 0
	}
	live := d.pending[d.head:]
	i, _ := slices.BinarySearchFunc(live, e.Generation, func(p Event, g uint64) int {
		return cmp.Compare(p.Generation, g)
	})
	d.pending = slices.Insert(d.pending, d.head+i, e)
}

// pop removes the oldest pending event in O(1).
func (d *delivery) pop() Event {
	e := d.pending[d.head]
	d.pending[d.head] = Event{} // drop its strings for the collector
	d.head++
	if d.head == len(d.pending) {
		d.pending, d.head = d.pending[:0], 0
	}
	return e
}

// deliver calls the listener. A listener runs inside a caller's Done or
// Allow, on the hot path of some request: if it panics (a logging hook with
// a bug), the panic is recovered and logged with its stack through
// log/slog's default logger, and the breaker and the caller carry on.
func deliver(listener func(Event), e Event) {
	_, err := Guard("OnTransition", func() (struct{}, error) { listener(e); return struct{}{}, nil }, nil)
	if pe, ok := err.(*PanicError); ok {
		slog.Error("fusebox: breaker transition listener panicked",
			"event", e.String(), "panic", pe.Value, "stack", string(pe.Stack))
	}
}
