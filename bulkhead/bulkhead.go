package bulkhead

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
)

// ErrFull is returned by [Bulkhead.Acquire] when every slot is busy and the
// queue, if any, is full: the supplier is saturated.
var ErrFull = errors.New("bulkhead: full")

// maxSize bounds Slots and Queue: each count lives in 32 bits of the state
// word, and int conversions must be exact on 32-bit platforms too.
const maxSize = math.MaxInt32

// defaultSlots is the size of a zero Config, as in executor.Config.
const defaultSlots = 10

// Config sets the size of a [Bulkhead]. It is plain data; the zero value
// is 10 slots and no queue, as in executor.Config.
type Config struct {
	// Slots is the number of calls that may hold a slot at the same time.
	// 0 means 10.
	Slots int

	// Queue is the number of callers that may wait for a slot, in FIFO
	// order, when all slots are busy. 0 means no queue: a caller that finds
	// no free slot is refused at once. It must not be negative.
	Queue int

	// LowWater is the queue level at or below which the queue counts as
	// drained (Stats.Queued ≤ Stats.LowWater); it gives a breaker opened on
	// a full queue hysteresis, so it does not flap. 0 means Queue/2. When
	// Queue > 0 it must be below Queue, so a full queue is never drained;
	// when Queue is 0 it must be 0.
	LowWater int
}

// Stats is a consistent snapshot of a [Bulkhead]: InUse and Queued come from
// one atomic load, so InUse+Free == Slots, but while a Resize that shrank it
// waits for calls to end (then InUse > Slots and Free is 0).
type Stats struct {
	InUse    int // slots held
	Free     int // slots not held: Slots - InUse
	Queued   int // callers waiting in the queue
	Slots    int // Config.Slots
	QueueCap int // Config.Queue
	LowWater int // the effective low-water mark of the queue
}

// errNil is the error of Acquire and Resize on a nil *Bulkhead.
var errNil = errors.New("bulkhead: a nil *Bulkhead (make one with bulkhead.New)")

// New returns a Bulkhead sized by cfg, or an error naming the first invalid
// field.
func New(cfg Config) (*Bulkhead, error) {
	slots, low, err := check(cfg)
	if err != nil {
		return nil, err
	}
	b := new(Bulkhead)
	b.resize(slots, cfg.Queue, low)
	return b, nil
}

// Resize sizes b, in use or zero, without dropping anything: more slots go
// to the oldest queued callers at once; with fewer, the calls holding slots
// keep them, new ones see the new size at once, and slots held beyond it
// are freed as they are released; a smaller queue keeps the callers already
// in it. It returns the Waiters of Admit it handed a slot, oldest first, to
// be started as after Release (waiting Acquire calls it wakes itself). An
// invalid cfg, checked as by New, changes nothing.
func (b *Bulkhead) Resize(cfg Config) ([]*Waiter, error) {
	if b == nil {
		return nil, errNil
	}
	slots, low, err := check(cfg)
	if err != nil {
		return nil, err
	}
	handed := b.resize(slots, cfg.Queue, low)
	started := handed[:0]
	for _, w := range handed {
		if !wake(w) {
			started = append(started, w)
		}
	}
	return started, nil
}

// wakeup is the Value of the Waiter of a blocked Acquire: closing it hands
// that Acquire its slot. Only this package can make one, so a Waiter of
// Admit is never taken for one.
type wakeup chan struct{}

// wake hands w its slot if it is an Acquire's and reports whether it was.
func wake(w *Waiter) bool {
	c, ok := w.Value.(wakeup)
	if ok {
		close(c) // the waiting Acquire owns the slot now
	}
	return ok
}

// check validates cfg and returns its effective slots and low-water mark.
func check(cfg Config) (slots, lowWater int, err error) {
	switch {
	case cfg.Slots < 0:
		return 0, 0, fmt.Errorf("bulkhead: Slots must be ≥ 1, or 0 for the default 10, got %d", cfg.Slots)
	case cfg.Slots > maxSize:
		return 0, 0, fmt.Errorf("bulkhead: Slots must be ≤ %d, got %d", maxSize, cfg.Slots)
	case cfg.Queue < 0:
		return 0, 0, fmt.Errorf("bulkhead: Queue must be ≥ 0, got %d", cfg.Queue)
	case cfg.Queue > maxSize:
		return 0, 0, fmt.Errorf("bulkhead: Queue must be ≤ %d, got %d", maxSize, cfg.Queue)
	case cfg.LowWater < 0:
		return 0, 0, fmt.Errorf("bulkhead: LowWater must be ≥ 0, got %d", cfg.LowWater)
	case cfg.Queue == 0 && cfg.LowWater != 0:
		return 0, 0, fmt.Errorf("bulkhead: LowWater must be 0 when Queue is 0, got %d", cfg.LowWater)
	case cfg.Queue > 0 && cfg.LowWater >= cfg.Queue:
		return 0, 0, fmt.Errorf("bulkhead: LowWater must be < Queue (%d), got %d", cfg.Queue, cfg.LowWater)
	}
	return cmp.Or(cfg.Slots, defaultSlots), cmp.Or(cfg.LowWater, cfg.Queue/2), nil
}

// TryAcquire takes a slot if one is free and nobody is queued, and reports
// whether it did. It never waits. A false result is the saturation signal:
// it is exact at the moment of the call, not read from a polled gauge.
//
// Queued callers always come first: while any wait, TryAcquire fails even
// for a newcomer, because freed slots pass straight to the oldest waiter.
func (b *Bulkhead) TryAcquire() bool {
	return b.Admit(nil) == Acquired
}

// Acquire takes a slot, waiting in the FIFO queue if all slots are busy, like
// x/sync's semaphore. It returns nil once the caller holds a slot (and must
// Release it); [ErrFull] at once when slots and queue are all taken (or all
// slots are taken and there is no queue); ctx.Err() if ctx is done before a
// slot is handed over, in which case no slot is held and the queue place is
// given back. If the hand-over and the end of ctx happen at the same moment,
// the hand-over wins: Acquire returns nil and the caller holds the slot.
//
// Acquire allocates only when it has to wait. A nil ctx is an error, and no
// slot is held.
func (b *Bulkhead) Acquire(ctx context.Context) error {
	if ctx == nil {
		return errors.New("bulkhead: Acquire with a nil context (use context.Background())")
	}
	if b == nil {
		return errNil
	}
	done := ctx.Done()
	select {
	case <-done:
		// A done context fails even when a slot is free, as in x/sync.
		return ctx.Err()
	default:
	}
	if b.TryAcquire() {
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
		// Release already handed w the slot (it closes ready just after):
		// the slot is ours.
		return nil
	}
}

// Release frees one slot held by the caller, or hands it straight to the
// oldest queued caller: a waiting Acquire returns, and a Waiter of Admit
// is returned, for the caller to start its work (which now holds the slot
// and must Release it in turn). Otherwise it returns nil. It panics when
// no slot is held ("bulkhead: Release without Acquire").
func (b *Bulkhead) Release() *Waiter {
	if b == nil {
		panic("bulkhead: Release without Acquire (on a nil *Bulkhead)")
	}
	w := b.release()
	if w != nil && wake(w) {
		return nil
	}
	return w
}

// Stats returns a consistent snapshot of the counts.
func (b *Bulkhead) Stats() Stats {
	if b == nil {
		return Stats{}
	}
	inUse, queued := unpack(b.state.Load())
	size, queue, low := b.slots.Load(), b.queueCap.Load(), b.lowWater.Load()
	// After a Resize that shrank it, more slots than it has may be in use.
	return Stats{InUse: int(inUse), Free: int(size - min(inUse, size)), Queued: int(queued),
		Slots: int(size), QueueCap: int(queue), LowWater: int(low)}
}
