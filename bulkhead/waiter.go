package bulkhead

import (
	"strconv"

	"github.com/fusebox-go/fusebox/internal/ilist"
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

var admissionNames = [...]string{"Full", "Acquired", "Queued"}

// String returns the name of a.
func (a Admission) String() string {
	if int(a) < len(admissionNames) {
		return admissionNames[a]
	}
	return "Admission(" + strconv.Itoa(int(a)) + ")"
}

// A Waiter is a place in the queue of a [Bulkhead], for [Bulkhead.Admit].
// Its owner embeds it in the work it stands for (the executor embeds one in
// each queued call), so queueing allocates nothing and needs no goroutine:
// a queued Waiter is just linked into the list until a Release hands it a
// slot or a Cancel removes it.
//
// The zero value is ready to use. A Waiter may be admitted again once it
// has left the queue (handed out or cancelled), but it must not be in two
// queues at once. Only Value is the owner's; the rest belongs to the
// bulkhead, which guards it with its mutex.
type Waiter struct {
	// Value is the owner's payload, typically the work to start when the
	// Waiter is handed a slot. Set it before Admit; the bulkhead does not
	// change it.
	Value any

	n node // w's place in the queue, guarded by the queue's mutex
}

// node links a Waiter into the queue; w points back to the Waiter, which
// is set while it is queued.
type node struct {
	links ilist.Links[node]
	w     *Waiter
}

// Links returns n's links, for package ilist.
func (n *node) Links() *ilist.Links[node] { return &n.links }
