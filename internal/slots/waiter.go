package slots

import (
	"strconv"

	"github.com/fusebox-go/fusebox/internal/ilist"
)

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

var admissionNames = [...]string{"Full", "Acquired", "Queued"}

// String returns the name of a.
func (a Admission) String() string {
	if int(a) < len(admissionNames) {
		return admissionNames[a]
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

	links ilist.Links[Waiter] // guarded by the queue's mutex
}

// Links returns w's links in the queue, for package ilist.
func (w *Waiter) Links() *ilist.Links[Waiter] { return &w.links }
