package breaker

import (
	"sync"
	"sync/atomic"
)

// window is the sliding window behind the rate rules. A fresh one belongs to
// every closed period, so closing "clears" it by construction.
type window interface {
	// add records one call that ended at now (ns since the breaker's epoch).
	add(now int64, failed, slow bool)
	// counts returns the calls, failures and slow calls in the window at now.
	counts(now int64) (calls, failures, slow int64)
}

func newWindow(o *optRule) window {
	switch {
	case !o.hasWindow():
		return nil
	case o.bucketWidth > 0:
		return &timeWindow{width: o.bucketWidth, buckets: make([]bucket, o.buckets)}
	default:
		return &countWindow{slots: make([]atomic.Uint32, o.windowSize)}
	}
}

// Slot values of a countWindow; 0 is an empty slot.
const (
	slotUsed   = 1
	slotFailed = 2
	slotSlow   = 4
)

// countWindow keeps the last len(slots) calls in a ring. It is lock-free:
// each call claims the next position with one atomic add and swaps its
// outcome into the slot; the aggregates are adjusted by the difference between
// what it wrote and what it replaced. Every swap accounts for exactly the value
// it displaced, so once writers are quiet the aggregates equal the sum of the
// slots, whatever the interleaving; a reader racing with writers may see one
// call's aggregates half applied, which can move a rate by one call at most.
type countWindow struct {
	slots                 []atomic.Uint32
	next                  atomic.Uint64
	calls, failures, slow atomic.Int64
}

func (w *countWindow) add(_ int64, failed, slow bool) {
	v := uint32(slotUsed)
	if failed {
		v |= slotFailed
	}
	if slow {
		v |= slotSlow
	}
	i := (w.next.Add(1) - 1) % uint64(len(w.slots))
	old := w.slots[i].Swap(v)
	if old == 0 {
		w.calls.Add(1)
	}
	if d := bit(v, slotFailed) - bit(old, slotFailed); d != 0 {
		w.failures.Add(d)
	}
	if d := bit(v, slotSlow) - bit(old, slotSlow); d != 0 {
		w.slow.Add(d)
	}
}

func bit(v, mask uint32) int64 {
	if v&mask != 0 {
		return 1
	}
	return 0
}

func (w *countWindow) counts(int64) (calls, failures, slow int64) {
	return w.calls.Load(), w.failures.Load(), w.slow.Load()
}

// timeWindow keeps per-bucket counts of the last len(buckets)×width
// nanoseconds; a bucket ages out whole. A bucket is reused for a later
// interval by resetting it, which cannot be done exactly with independent
// atomics, so a short mutex guards the window: the rule already reads the
// clock on every call (~30 ns), and the lock is held for a few loads and
// stores, never across user code.
type timeWindow struct {
	mu      sync.Mutex
	width   int64
	buckets []bucket
}

type bucket struct {
	index                 int64 // now/width of the interval it counts
	calls, failures, slow int64
}

func (w *timeWindow) add(now int64, failed, slow bool) {
	idx := now / w.width
	w.mu.Lock()
	b := &w.buckets[idx%int64(len(w.buckets))]
	if b.index != idx {
		*b = bucket{index: idx}
	}
	b.calls++
	if failed {
		b.failures++
	}
	if slow {
		b.slow++
	}
	w.mu.Unlock()
}

func (w *timeWindow) counts(now int64) (calls, failures, slow int64) {
	idx := now / w.width
	oldest := idx - int64(len(w.buckets)) + 1
	w.mu.Lock()
	for i := range w.buckets {
		if b := &w.buckets[i]; b.calls > 0 && b.index >= oldest && b.index <= idx {
			calls += b.calls
			failures += b.failures
			slow += b.slow
		}
	}
	w.mu.Unlock()
	return calls, failures, slow
}
