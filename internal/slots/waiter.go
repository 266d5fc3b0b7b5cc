package slots

import "strconv"

// Admission is the outcome of [Slots.Admit].
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

// A Waiter is a place in the queue of a [Slots]. Its owner embeds it in the
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
	// reads or changes it.
	Value any

	prev, next *Waiter
	queued     bool // linked into a bulkhead's list
}

// push links w at the tail. b.mu must be held.
func (b *Slots) push(w *Waiter) {
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
func (b *Slots) unlink(w *Waiter) {
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
