package bulkhead

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// ErrFull is returned by [Bulkhead.Acquire] when every slot is busy and the
// queue, if any, is full: the supplier is saturated.
var ErrFull = errors.New("bulkhead: full")

// maxSize bounds Slots and Queue: each count lives in 32 bits of the state
// word, and int conversions must be exact on 32-bit platforms too.
const maxSize = math.MaxInt32

// Config sets the size of a [Bulkhead]. It is plain data; the zero value is
// not valid, because a bulkhead without slots could never admit anything.
type Config struct {
	// Slots is the number of calls that may hold a slot at the same time.
	// It must be at least 1: 0 is an error, not a default, so that a
	// forgotten field is caught by New instead of silently picking a size.
	Slots int

	// Queue is the number of callers that may wait for a slot, in FIFO
	// order, when all slots are busy. 0 means no queue: a caller that finds
	// no free slot is refused at once. It must not be negative.
	Queue int

	// LowWater is the queue level at or below which the queue counts as
	// drained (see [Bulkhead.Drained]); it gives a breaker opened on a full
	// queue hysteresis, so it does not flap. 0 means Queue/2. When Queue > 0
	// it must be below Queue, so a full queue is never drained; when Queue
	// is 0 it must be 0.
	LowWater int
}

// Stats is a consistent snapshot of a [Bulkhead]: InUse and Queued come from
// one atomic load, so InUse+Free == Slots holds, except after a
// [Bulkhead.Resize] below the slots in use: then Free is 0 and InUse exceeds
// Slots until enough calls have ended.
type Stats struct {
	InUse    int // slots held
	Free     int // slots not held: Slots - InUse
	Queued   int // callers waiting in the queue
	Slots    int // Config.Slots
	QueueCap int // Config.Queue
	LowWater int // the effective low-water mark of the queue
}

// A Bulkhead counts the slots of one supplier and keeps an optional bounded
// FIFO queue of [Waiter]s for callers that arrive while all slots are busy.
//
// A Bulkhead runs nothing and starts no goroutine: it only accounts. An idle
// Bulkhead is a few words of memory. All methods are safe for concurrent use.
//
// The counts live in one atomic word, so the paths without waiters (the
// common case) take no lock. Only while waiters are queued do Admit, Release
// and Cancel take a small mutex that guards the intrusive waiter list.
type Bulkhead struct {
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

	// The sizes, changed only by Resize, under mu. The paths that run
	// without mu load them once per attempt: a size that changes between
	// that load and the CAS is the same as a size that changed just after
	// the CAS.
	slots    atomic.Uint32
	queueCap atomic.Uint32
	lowWater atomic.Uint32

	mu   sync.Mutex // guards head, tail and the links of queued Waiters
	head *Waiter    // oldest waiter, the next to be handed a slot
	tail *Waiter
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

// New returns a Bulkhead sized by cfg, or an error naming the first invalid
// field.
func New(cfg Config) (*Bulkhead, error) {
	low, err := check(cfg)
	if err != nil {
		return nil, err
	}
	b := &Bulkhead{}
	b.setSize(cfg, low)
	return b, nil
}

func (b *Bulkhead) setSize(cfg Config, low int) {
	b.slots.Store(uint32(cfg.Slots))
	b.queueCap.Store(uint32(cfg.Queue))
	b.lowWater.Store(uint32(low))
}

// check validates cfg and returns its effective low-water mark.
func check(cfg Config) (int, error) {
	switch {
	case cfg.Slots < 1:
		return 0, fmt.Errorf("bulkhead: Slots must be ≥ 1, got %d", cfg.Slots)
	case cfg.Slots > maxSize:
		return 0, fmt.Errorf("bulkhead: Slots must be ≤ %d, got %d", maxSize, cfg.Slots)
	case cfg.Queue < 0:
		return 0, fmt.Errorf("bulkhead: Queue must be ≥ 0, got %d", cfg.Queue)
	case cfg.Queue > maxSize:
		return 0, fmt.Errorf("bulkhead: Queue must be ≤ %d, got %d", maxSize, cfg.Queue)
	case cfg.LowWater < 0:
		return 0, fmt.Errorf("bulkhead: LowWater must be ≥ 0, got %d", cfg.LowWater)
	case cfg.Queue == 0 && cfg.LowWater != 0:
		return 0, fmt.Errorf("bulkhead: LowWater must be 0 when Queue is 0, got %d", cfg.LowWater)
	case cfg.Queue > 0 && cfg.LowWater >= cfg.Queue:
		return 0, fmt.Errorf("bulkhead: LowWater must be < Queue (%d), got %d", cfg.Queue, cfg.LowWater)
	}
	if cfg.LowWater == 0 {
		return cfg.Queue / 2, nil
	}
	return cfg.LowWater, nil
}

// TryAcquire takes a slot if one is free and nobody is queued, and reports
// whether it did. It never waits. A false result is the saturation signal:
// it is exact at the moment of the call, not read from a polled gauge.
//
// Queued waiters always come first: while any wait, TryAcquire fails even
// for a newcomer, because freed slots pass straight to the oldest waiter.
func (b *Bulkhead) TryAcquire() bool {
	return b.Admit(nil) == Acquired
}

// Admit is the one-step admission the executor uses. It returns
//
//   - Acquired: the caller now holds a slot; w is untouched.
//   - Queued: no slot was free and w took a place at the tail of the queue.
//     w now holds no slot; later exactly one of two things happens to it:
//     a [Bulkhead.Release] hands it a slot (Release returns w), or
//     [Bulkhead.Cancel] removes it (Cancel returns true).
//   - Full: no slot and no queue place (or w is nil, or there is no queue);
//     nothing changed. Like a false TryAcquire, this is the exact moment the
//     caller found the bulkhead saturated.
//
// w may be nil when the caller does not want to wait. w must not be in a
// queue already (Admit panics if it is in this bulkhead's queue); set
// w.Value before calling Admit, since a concurrent Release may hand w out
// before Admit returns.
func (b *Bulkhead) Admit(w *Waiter) Admission {
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
	if w.queued {
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
				b.push(w)
				return Queued
			}
		}
	}
}

// Release frees one slot held by the caller. If a waiter is queued, the slot
// is not freed but handed directly to the oldest waiter, which is removed
// from the queue and returned: the caller must then start that waiter's work
// (the slot now belongs to that work, which must Release it in turn).
// Otherwise Release returns nil. Waiters of a blocked [Bulkhead.Acquire] are
// woken by Release itself and never returned.
//
// Release panics when no slot is held ("bulkhead: Release without Acquire"):
// releasing more than was acquired is a programming error.
func (b *Bulkhead) Release() *Waiter {
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
			if c, ok := w.Value.(wakeup); ok {
				close(c) // a blocked Acquire: it owns the slot now
				return nil
			}
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
	w = b.head
	if w == nil {
		return nil, false
	}
	// queued > 0: nobody else can change the word (see state).
	if inUse, _ := unpack(b.state.Load()); inUse > b.slots.Load() {
		b.state.Add(^uint64(0)) // inUse-1; still ≥ slots, so waiters may stay
		return nil, true
	}
	b.unlink(w)
	// queued-1 and inUse unchanged: the slot moves from the releaser to w
	// without ever being free, so no TryAcquire can take it in between.
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
func (b *Bulkhead) Cancel(w *Waiter) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !w.queued {
		return false
	}
	b.unlink(w)
	// inUse stays == slots, so the invariant holds whatever queued becomes.
	b.state.Add(queuedDec)
	return true
}

// Stats returns a consistent snapshot of the counts.
func (b *Bulkhead) Stats() Stats {
	inUse, queued := unpack(b.state.Load())
	slots := b.slots.Load()
	return Stats{
		InUse:    int(inUse),
		Free:     int(slots - min(inUse, slots)),
		Queued:   int(queued),
		Slots:    int(slots),
		QueueCap: int(b.queueCap.Load()),
		LowWater: int(b.lowWater.Load()),
	}
}

// Drained reports whether the queue is at or below its low-water mark. A
// breaker opened because the queue was full should close again only once
// Drained is true. A bulkhead without a queue is always drained (its queue
// can never fill). A full queue is never drained, since LowWater < Queue.
func (b *Bulkhead) Drained() bool {
	_, queued := unpack(b.state.Load())
	return queued <= b.lowWater.Load()
}
