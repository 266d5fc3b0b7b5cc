// Package slots is the accounting behind every bulkhead: a count of slots
// in use and an intrusive FIFO queue of waiters, in one atomic word. Package
// bulkhead builds its blocking Acquire on it; the executor admits, queues,
// hands over and cancels its calls with it directly, so that a queued call
// costs neither a goroutine nor an allocation.
//
// Slot ownership, which every user of Admit must follow:
//
//   - Admit returned Acquired: the caller holds a slot and must Release it.
//   - Admit returned Queued: the Waiter holds nothing yet. Later exactly one
//     of these happens, never both: a Release returns the Waiter (the slot
//     now belongs to its work; the releaser must start that work, and the
//     work must Release the slot when it ends), or Cancel returns true (the
//     Waiter left the queue; its work must never run).
//   - Cancel returned false for a Waiter that was queued: a Release got
//     there first, so the work will be started by that releaser.
package slots

import (
	"sync"
	"sync/atomic"

	"github.com/fusebox-go/fusebox/internal/ilist"
)

// Slots counts the slots of one supplier and keeps an optional bounded FIFO
// queue of [Waiter]s for callers that arrive while all slots are busy.
//
// Slots runs nothing and starts no goroutine: it only accounts. Its zero
// value has no slot; Init sizes it. All methods are safe for concurrent use.
//
// The counts live in one atomic word, so the paths without waiters (the
// common case) take no lock. Only while waiters are queued do Admit, Release
// and Cancel take a small mutex that guards the intrusive waiter list.
type Slots struct {
	// state packs the slots in use (low 32 bits) and the number of queued
	// waiters (high 32 bits), so both change together in one CAS. The
	// invariant every transition keeps:
	//
	//	queued > 0  implies  inUse ≥ slots
	//
	// (inUse == slots but after a Resize that shrank the bulkhead below
	// the slots in use: then a release frees its slot instead of handing
	// it over, until inUse is down to slots).
	// A waiter never sits in the queue while a slot is free. Transitions:
	// acquire (inUse+1, only if inUse < slots and queued == 0, lock-free);
	// release without waiters (inUse-1, only if queued == 0, lock-free);
	// enqueue (queued+1, only if inUse == slots, under mu); hand-over and
	// cancel (queued-1, inUse unchanged, under mu). So queued changes only
	// under mu, and inUse cannot change at all while queued > 0: under mu,
	// queued == 0 (and the list is empty) or the word is frozen but for us.
	// The word holds nothing but counts, so a CAS that succeeds after the
	// word changed and changed back (ABA) is still a correct transition.
	state atomic.Uint64

	// The sizes, changed only by Init and Resize, under mu. The paths that
	// run without mu load them once per attempt: a size that changes
	// between that load and the CAS is the same as a size that changed
	// just after the CAS.
	slots    atomic.Uint32
	queueCap atomic.Uint32
	lowWater atomic.Uint32

	mu    sync.Mutex                  // guards waits and the links of queued Waiters
	waits ilist.List[Waiter, *Waiter] // oldest first: the next to be handed a slot
}

const (
	inUseMask = 1<<32 - 1
	queuedOne = 1 << 32 // adds one to the queued half of state

	// queuedDec is -queuedOne in two's complement: adding it removes one
	// waiter (atomic.Uint64 has no Sub).
	queuedDec = ^uint64(queuedOne - 1)
)

func unpack(s uint64) (inUse, queued uint32) {
	return uint32(s & inUseMask), uint32(s >> 32)
}

// Init sizes b: slots ≥ 1, queue ≥ 0, and lowWater < queue (or 0 without
// a queue), all checked by the caller. b must not be in use.
func (b *Slots) Init(slots, queue, lowWater int) {
	b.setSize(slots, queue, lowWater)
}

func (b *Slots) setSize(slots, queue, lowWater int) {
	b.slots.Store(uint32(slots))
	b.queueCap.Store(uint32(queue))
	b.lowWater.Store(uint32(lowWater))
}

// Resize changes the sizes of b in use (checked by the caller as for
// Init), without dropping anything:
//
//   - More slots: the oldest waiters are handed the new slots at once and
//     returned, oldest first; the caller starts their work as it would for
//     a Waiter returned by Release.
//   - Fewer slots: calls in flight keep their slots and end as usual. New
//     admissions see the new size at once, and releases free their slots
//     without handing them to waiters until no more than the new number of
//     slots are in use, so in-flight never exceeds the larger of the two
//     sizes and converges to the new one.
//   - A smaller queue: waiters already queued keep their places; new ones
//     are refused until the queue is below the new size.
func (b *Slots) Resize(slots, queue, lowWater int) []*Waiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Under mu: enqueue and the hand-over, which compare with the sizes
	// under mu too, see either the old sizes or the new ones.
	b.setSize(slots, queue, lowWater)
	var handed []*Waiter
	for {
		inUse, queued := unpack(b.state.Load())
		if queued == 0 || inUse >= b.slots.Load() {
			// The invariant holds again: no waiter beside a free slot.
			return handed
		}
		// queued > 0: the word changes only under mu, which we hold.
		handed = append(handed, b.waits.PopFront())
		b.state.Add(queuedDec + 1) // queued-1, inUse+1: the new slot goes to the waiter
	}
}

// Admit takes a slot or, with w, a queue place. It returns
//
//   - Acquired: the caller now holds a slot; w is untouched.
//   - Queued: no slot was free and w took a place at the tail of the queue.
//     w now holds no slot; later exactly one of two things happens to it:
//     a [Slots.Release] hands it a slot (Release returns w), or
//     [Slots.Cancel] removes it (Cancel returns true).
//   - Full: no slot and no queue place (or w is nil, or there is no queue);
//     nothing changed. This is the exact moment the caller found the
//     bulkhead saturated.
//
// w may be nil when the caller does not want to wait. w must not be in a
// queue already (Admit panics if it is in this bulkhead's queue); set
// w.Value before calling Admit, since a concurrent Release may hand w out
// before Admit returns.
func (b *Slots) Admit(w *Waiter) Admission {
	for {
		s := b.state.Load()
		inUse, queued := unpack(s)
		if inUse < b.slots.Load() && queued == 0 {
			// Lock-free: a CAS that lost to any other change (a release,
			// an acquire, an enqueue) just looks again.
			if b.state.CompareAndSwap(s, s+1) {
				return Acquired
			}
			continue
		}
		// No slot. Refusing here, without the lock, is exact: the word
		// just loaded said slots and queue were both full.
		if w == nil || queued >= b.queueCap.Load() {
			return Full
		}
		return b.enqueue(w)
	}
}

// enqueue is the slow path of Admit: take a queue place for w, or a slot
// that was freed since Admit looked.
func (b *Slots) enqueue(w *Waiter) Admission {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ilist.Linked(w) {
		panic("bulkhead: Admit of a Waiter that is already queued")
	}
	for {
		s := b.state.Load()
		inUse, queued := unpack(s)
		switch {
		case inUse < b.slots.Load():
			// A lock-free Release freed a slot after Admit looked (it
			// could, since queued was 0). Take the slot rather than
			// queueing: a waiter must never wait beside a free slot.
			// queued is 0 here by the invariant.
			if b.state.CompareAndSwap(s, s+1) {
				return Acquired
			}
		case queued >= b.queueCap.Load():
			return Full
		default:
			// All slots are busy. This CAS publishes the place and, in the
			// same step, checks that inUse is still == slots: a lock-free
			// Release that got in first makes it fail, and the loop takes
			// the freed slot. Once it succeeds, queued > 0 shuts the
			// lock-free Release path, so every releaser now needs mu,
			// which we hold until w is linked: no releaser can look for a
			// waiter between the count going up and w being in the list.
			if b.state.CompareAndSwap(s, s+queuedOne) {
				b.waits.PushBack(w)
				return Queued
			}
		}
	}
}

// Release frees one slot held by the caller. If a waiter is queued, the slot
// is not freed but handed directly to the oldest waiter, which is removed
// from the queue and returned: the caller must then start that waiter's work
// (the slot now belongs to that work, which must Release it in turn).
// Otherwise Release returns nil.
//
// Release panics when no slot is held ("bulkhead: Release without Acquire"):
// releasing more than was acquired is a programming error.
func (b *Slots) Release() *Waiter {
	for {
		s := b.state.Load()
		inUse, queued := unpack(s)
		if inUse == 0 {
			panic("bulkhead: Release without Acquire")
		}
		if queued == 0 {
			// Lock-free. The CAS also checks that queued is still 0: an
			// enqueuer that slipped in makes it fail, and the next round
			// hands the slot to that waiter instead.
			if b.state.CompareAndSwap(s, s-1) {
				return nil
			}
			continue
		}
		w, freed := b.handOver()
		if freed {
			return nil
		}
		if w != nil {
			return w
		}
		// Every waiter was cancelled between the load and the lock, so
		// queued is 0 again: free the slot on the lock-free path.
	}
}

// handOver pops the oldest waiter and gives it the caller's slot, or returns
// nil if the queue is empty. While more slots are in use than the bulkhead
// has (it was shrunk), it frees the caller's slot instead and reports freed:
// the waiters wait until the calls in use are down to the new size.
func (b *Slots) handOver() (w *Waiter, freed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Under mu the list holds exactly queued entries (both change together
	// only under mu), so an empty list means queued == 0.
	if b.waits.Front() == nil {
		return nil, false
	}
	// queued > 0: nobody else can change the word (see state).
	if inUse, _ := unpack(b.state.Load()); inUse > b.slots.Load() {
		b.state.Add(^uint64(0)) // inUse-1; still ≥ slots, so waiters may stay
		return nil, true
	}
	w = b.waits.PopFront()
	// queued-1 and inUse unchanged: the slot moves from the releaser to w
	// without ever being free, so no Admit can take it in between.
	// A plain Add is enough: while queued > 0 nobody else can change the
	// word (see state), and we hold mu.
	b.state.Add(queuedDec)
	return w, false
}

// Cancel removes w from the queue. It returns true if w was queued: w's
// work must then never run, and no slot was involved. It returns false if w
// is not in the queue: either a Release already handed w a slot (the slot
// belongs to w's work from then on — whoever got w from Release starts it,
// and it must Release the slot when it ends, possibly at once if it sees
// that it was cancelled), or w was never queued. Cancel and the hand-over
// are serialized, so for a queued w exactly one of them wins.
//
// Cancel must be called on the bulkhead w was admitted to.
func (b *Slots) Cancel(w *Waiter) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !ilist.Linked(w) {
		return false
	}
	b.waits.Remove(w)
	// inUse stays ≥ slots, so the invariant holds whatever queued becomes.
	b.state.Add(queuedDec)
	return true
}

// Counts returns the slots in use and the queued waiters, from one atomic
// load, so they are consistent with each other.
func (b *Slots) Counts() (inUse, queued int) {
	i, q := unpack(b.state.Load())
	return int(i), int(q)
}

// Full reports whether every slot and every queue place is taken: Admit
// would refuse now.
func (b *Slots) Full() bool {
	inUse, queued := unpack(b.state.Load())
	return inUse >= b.slots.Load() && queued >= b.queueCap.Load()
}

// QueueFull reports whether every queue place is taken; without a queue it
// always is.
func (b *Slots) QueueFull() bool {
	_, queued := unpack(b.state.Load())
	return queued >= b.queueCap.Load()
}

// Size returns the sizes in force.
func (b *Slots) Size() (slots, queue, lowWater int) {
	return int(b.slots.Load()), int(b.queueCap.Load()), int(b.lowWater.Load())
}

// Drained reports whether the queue is at or below its low-water mark. A
// breaker opened because the queue was full should close again only once
// Drained is true. A bulkhead without a queue is always drained (its queue
// can never fill). A full queue is never drained, since LowWater < Queue.
func (b *Slots) Drained() bool {
	_, queued := unpack(b.state.Load())
	return queued <= b.lowWater.Load()
}
