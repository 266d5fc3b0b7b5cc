package bulkhead

import (
	"context"
	"strconv"
)

// Admission is the outcome of [Bulkhead.Admit].
type Admission uint8

const (
	// Full means there was no free slot and no queue place: the caller was
	// refused and nothing changed.
	Full Admission = iota
	// Acquired means the caller holds a slot and must Release it.
	Acquired
	// Queued means the Waiter is in the queue, holding no slot yet.
	Queued
)

// String returns the name of a.
func (a Admission) String() string {
	switch a {
	case Full:
		return "Full"
	case Acquired:
		return "Acquired"
	case Queued:
		return "Queued"
	}
	return "Admission(" + strconv.Itoa(int(a)) + ")"
}

// A Waiter is a place in a [Bulkhead]'s queue. Its owner embeds it in the
// work it stands for (the executor embeds one in each call), so queueing
// allocates nothing and needs no goroutine: a queued Waiter is just linked
// into the list until a Release hands it a slot or a Cancel removes it.
//
// The zero value is ready to use. A Waiter may be admitted again once it
// has left the queue (handed out or cancelled), but it must not be in two
// queues at once. Only Value is the owner's; the rest belongs to the
// bulkhead, which guards it with its mutex.
type Waiter struct {
	// Value is the owner's payload, typically the work to start when the
	// Waiter is handed a slot. Set it before Admit; the bulkhead never
	// reads or changes it (except for its own Acquire waiters).
	Value any

	prev, next *Waiter
	queued     bool // linked into a bulkhead's list
}

// wakeup marks the Waiters of blocked Acquire calls: Release closes the
// channel to hand over the slot instead of returning the Waiter.
type wakeup chan struct{}

// push links w at the tail. b.mu must be held.
func (b *Bulkhead) push(w *Waiter) {
	w.queued = true
	w.prev, w.next = b.tail, nil
	if b.tail == nil {
		b.head = w
	} else {
		b.tail.next = w
	}
	b.tail = w
}

// unlink removes the queued w from the list. b.mu must be held.
func (b *Bulkhead) unlink(w *Waiter) {
	if w.prev == nil {
		b.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		b.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
}

// Acquire takes a slot, waiting in the FIFO queue if all slots are busy, like
// x/sync's semaphore. It returns nil once the caller holds a slot (and must
// Release it); [ErrFull] at once when slots and queue are all taken (or all
// slots are taken and there is no queue); ctx.Err() if ctx is done before a
// slot is handed over, in which case no slot is held and the queue place is
// given back. If the hand-over and the end of ctx happen at the same moment,
// the hand-over wins: Acquire returns nil and the caller holds the slot.
//
// Acquire allocates only when it has to wait.
func (b *Bulkhead) Acquire(ctx context.Context) error {
	done := ctx.Done()
	select {
	case <-done:
		// A done context fails even when a slot is free, as in x/sync.
		return ctx.Err()
	default:
	}
	if b.Admit(nil) == Acquired {
		return nil
	}
	ready := make(wakeup)
	w := &Waiter{Value: ready}
	switch b.Admit(w) {
	case Acquired:
		return nil
	case Full:
		return ErrFull
	}
	select {
	case <-ready:
		return nil
	case <-done:
		if b.Cancel(w) {
			return ctx.Err()
		}
		// Release already popped w: the slot is ours (Release closes
		// ready just after). Keep it rather than releasing it here, which
		// could hand it to a waiter whose work only the executor can start.
		return nil
	}
}
