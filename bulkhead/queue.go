package bulkhead

// The accounting of a Bulkhead: a count of slots in use and an intrusive
// FIFO queue of waiters, in one atomic word. Acquire and Release are built
// on Admit and the hand-over below; the executor admits, queues, hands
// over and cancels its calls with them directly, so that a queued call
// costs neither a goroutine nor an allocation.

import (
	"sync"
	"sync/atomic"

	"github.com/fusebox-go/fusebox/internal/ilist"
)

// A Bulkhead counts the slots of one supplier and keeps an optional bounded
// FIFO queue of callers that arrive while all slots are busy: blocking
// ones ([Bulkhead.Acquire]) and [Waiter]s queued by [Bulkhead.Admit]. It
// runs nothing and starts no goroutine; all methods are safe for
// concurrent use. The zero Bulkhead has no slot until Resize sizes it (New
// makes a sized one), so it can be a field of a struct of yours; it must
// not be copied once used. A nil *Bulkhead has no slots either: Acquire
// and Resize return an error, Admit Full, Release panics.
type Bulkhead struct {
	// state packs the slots in use (low 32 bits) and the queued waiters
	// (high 32 bits), changed together by CAS; queued > 0 implies inUse ≥
	// slots (a waiter never sits in the queue while a slot is free).
	// Acquire and release without waiters are lock-free; enqueue, hand-over
	// and cancel run under mu, so inUse cannot change while queued > 0. The
	// word holds only counts, so ABA is harmless. docs/design.md, "Bulkhead
	// accounting", has every transition.
	state atomic.Uint64

	// The sizes, changed only by Resize, under mu. The paths that
	// run without mu load them once per attempt: a size that changes
	// between that load and the CAS is the same as a size that changed
	// just after the CAS.
	slots    atomic.Uint32
	queueCap atomic.Uint32
	lowWater atomic.Uint32

	mu    sync.Mutex              // guards waits and the links of queued Waiters
	waits ilist.List[node, *node] // oldest first: the next to be handed a slot
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

// resize sets the sizes of b (checked by the caller) without dropping
// anything, and returns the waiters it handed the slots it added, oldest
// first (see Bulkhead.Resize).
func (b *Bulkhead) resize(slots, queue, lowWater int) []*Waiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Under mu: enqueue and the hand-over, which compare with the sizes
	// under mu too, see either the old sizes or the new ones.
	b.slots.Store(uint32(slots))
	b.queueCap.Store(uint32(queue))
	b.lowWater.Store(uint32(lowWater))
	var handed []*Waiter
	for {
		inUse, queued := unpack(b.state.Load())
		if queued == 0 || inUse >= b.slots.Load() {
			// The invariant holds again: no waiter beside a free slot.
			return handed
		}
		// queued > 0: the word changes only under mu, which we hold.
		handed = append(handed, b.waits.PopFront().w)
		b.state.Add(queuedDec + 1) // queued-1, inUse+1: the new slot goes to the waiter
	}
}

// Admit takes a slot or, with w, a queue place, without waiting:
// Acquired (the caller holds a slot and must Release it), Queued (w waits
// at the tail; later either a Release or Resize hands it a slot and
// returns it, and whoever got it starts w's work, which must Release the
// slot; or Cancel removes it and its work never runs), or Full (no slot
// and no queue place, or w is nil: nothing changed; the exact moment the
// bulkhead was found saturated). Set w.Value before Admit: a concurrent
// Release may hand w out before Admit returns. w must not be queued.
func (b *Bulkhead) Admit(w *Waiter) Admission {
	if b == nil {
		return Full
	}
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
func (b *Bulkhead) enqueue(w *Waiter) Admission {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ilist.Linked(&w.n) {
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
				w.n.w = w
				b.waits.PushBack(&w.n)
				return Queued
			}
		}
	}
}

// release frees the caller's slot, or hands it to the oldest waiter and
// returns that waiter (see Bulkhead.Release).
func (b *Bulkhead) release() *Waiter {
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
func (b *Bulkhead) handOver() (w *Waiter, freed bool) {
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
	w = b.waits.PopFront().w
	// queued-1 and inUse unchanged: the slot moves from the releaser to w
	// without ever being free, so no Admit can take it in between.
	// A plain Add is enough: while queued > 0 nobody else can change the
	// word (see state), and we hold mu.
	b.state.Add(queuedDec)
	return w, false
}

// Cancel takes w out of the queue and reports whether it was there: true
// means w's work must never run (it held no slot); false means a Release
// or Resize handed w a slot first (its work runs, and must Release the
// slot) or w was never queued. For a queued w exactly one of Cancel and
// the hand-over wins. Call it on the bulkhead w was admitted to.
func (b *Bulkhead) Cancel(w *Waiter) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !ilist.Linked(&w.n) {
		return false
	}
	b.waits.Remove(&w.n)
	// inUse stays ≥ slots, so the invariant holds whatever queued becomes.
	b.state.Add(queuedDec)
	return true
}

// Saturated reports whether every slot and every queue place is taken, so
// that Admit would refuse now. A nil or zero Bulkhead is always saturated.
func (b *Bulkhead) Saturated() bool {
	if b == nil {
		return true
	}
	inUse, queued := unpack(b.state.Load())
	return inUse >= b.slots.Load() && queued >= b.queueCap.Load()
}

// Drained reports whether the queue is at or below its low-water mark: a
// breaker opened because the queue was full should close again only then.
// A bulkhead without a queue is always drained; a full queue never is,
// since LowWater < Queue.
func (b *Bulkhead) Drained() bool {
	if b == nil {
		return true
	}
	_, queued := unpack(b.state.Load())
	return queued <= b.lowWater.Load()
}
