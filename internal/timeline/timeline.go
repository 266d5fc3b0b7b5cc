// Package timeline is the executor's deadline machinery: deadlines sorted
// by time and one timer armed for the earliest, instead of a timer and a
// context per call. Entries are embedded in what they time, so listing one
// allocates nothing; the timer runs only while entries are listed. The
// mechanism is described in docs/design.md, "The deadline timeline".
package timeline

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Kind says which of its owner's deadlines an entry is; its values are the
// owner's.
type Kind uint8

// Owner is what a deadline belongs to. Expired is called, on the timer's
// goroutine or one of its own, when the deadline passes while the entry is
// live; Closed when Close gives up on the entry. Since says when what the
// entry times began (for CountOld); math.MaxInt64: it never counts as old.
type Owner interface {
	Expired(k Kind)
	Closed(k Kind)
	Since(k Kind) int64
}

// Deadline is an entry of a timeline, embedded in what it times. Its owner
// sets At (ns since the timeline's epoch), Owner, Kind and Inline before
// adding it; Inline expiries run on the timer's goroutine and must not
// block, the others on a goroutine of their own.
type Deadline struct {
	next   *Deadline // in the inbox, then in the sorted list
	At     int64
	Owner  Owner
	Kind   Kind
	Inline bool
	// taken is set under the timeline's lock when the entry leaves the
	// inbox for the sorted list (or for Close), so that an adder that
	// finds the timeline closed knows whether Close has its entry.
	taken bool
	// done is set, without the timeline's lock, once the call no longer
	// needs this deadline (its function returned, it left the queue). The
	// entry stays listed until the timeline drops it: a finished call
	// costs one atomic store instead of a trip through the mutex.
	done atomic.Bool
}

// Finish marks the entry as no longer needed; the timeline drops it lazily.
func (d *Deadline) Finish() { d.done.Store(true) }

// Done reports whether Finish was called.
func (d *Deadline) Done() bool { return d.done.Load() }

// timeline is one published list of deadlines, sorted by time, and the
// timer armed for the earliest. Adding a deadline pushes it on the inbox,
// a lock-free stack, and takes the lock only when no armed timer covers
// it or every drainEvery-th push; finished entries are dropped lazily.
// docs/design.md ("Deadlines: one timer per executor") has the argument.
type timeline struct {
	// The inbox and the state an adder reads, on a cache line of their own.
	inbox  atomic.Pointer[Deadline] // pushed lock-free, moved to the list under mu
	pushes atomic.Uint32            // pushes so far, for drainEvery
	// armedAt is when the armed timer fires, or noTimer. It is lowered
	// only when the timer is reset to an earlier time; a firing sets it
	// to noTimer before it moves the inbox, so an adder that sees it at
	// or before its entry's time after pushing knows a firing will find
	// the entry in time. Written under mu, read by adders without it.
	armedAt atomic.Int64
	_       [cacheLine - 24]byte

	epoch    *time.Time                // the executor's; times are ns since it (monotonic)
	slot     *atomic.Pointer[timeline] // where it is published; emptied when it retires
	mu       sync.Mutex
	head     *Deadline
	tail     *Deadline
	n        int // entries in the sorted list, done ones included
	sweepAt  int // n at which the list is swept of its done entries
	timer    *time.Timer
	armedN   int           // the armed timer or its running func, and expiry goroutines
	gone     chan struct{} // made by close if armedN > 0; closed when it reaches 0
	isArmed  bool
	closed   bool
	retired  bool // found empty by its timer and unpublished: make a new one
	expiring int  // firings running their expiries right now
}

const (
	cacheLine = 64
	// noTimer in armedAt: no timer is armed, every adder takes the lock.
	noTimer = -1 << 63
	// drainEvery is how many pushes the inbox takes between two moves
	// into the list; it bounds how many finished calls it keeps alive.
	drainEvery = 64
	// minSweep is the list length below which the list is never swept.
	minSweep = 64
)

// Lazy is where an executor keeps a timeline: made when a deadline
// is added, dropped (timer and all) when its timer finds it empty, so an
// executor that had calls and is idle again holds no timeline at all. Once
// closed it holds closedTimeline for good, so nothing can be added.
type Lazy struct {
	p atomic.Pointer[timeline]
}

// closedTimeline refuses every deadline; a closed executor's Lazy
// holds it.
var closedTimeline = newTimeline(nil, nil, true)

func newTimeline(epoch *time.Time, slot *atomic.Pointer[timeline], closed bool) *timeline {
	t := &timeline{epoch: epoch, slot: slot, sweepAt: minSweep, closed: closed}
	t.armedAt.Store(noTimer)
	return t
}

// add lists d on the current timeline, making one if needed. It returns
// false once the executor is closing: d's call must end now.
func (l *Lazy) Add(d *Deadline, epoch *time.Time) bool {
	for {
		t := l.p.Load()
		if t == closedTimeline {
			return false // before t.add, which would push d into the shared inbox
		}
		if t == nil {
			n := newTimeline(epoch, &l.p, false)
			if !l.p.CompareAndSwap(nil, n) {
				continue
			}
			t = n
		}
		switch t.add(d) {
		case listedOK:
			return true
		case listClosed:
			return false
		}
		// listRetired: t emptied and unpublished itself meanwhile; try again.
	}
}

// close closes the timeline for good and returns its live entries, and a
// channel that closes once the timer's goroutine is gone (nil if there is
// none). A deadline being added concurrently either lands on the old
// timeline before it is closed (and is returned here) or finds
// closedTimeline.
func (l *Lazy) Close() ([]*Deadline, <-chan struct{}) {
	if t := l.p.Swap(closedTimeline); t != nil && t != closedTimeline {
		return t.close()
	}
	return nil, nil
}

type listing uint8

const (
	listedOK listing = iota
	listClosed
	listRetired
)

// now reads the timeline's clock.
func (t *timeline) now() int64 { return int64(time.Since(*t.epoch)) }

// add lists d (d.At set by the caller).
func (t *timeline) add(d *Deadline) listing {
	d.taken = false
	for {
		old := t.inbox.Load()
		d.next = old
		if t.inbox.CompareAndSwap(old, d) {
			break
		}
	}
	if a := t.armedAt.Load(); a != noTimer && a <= d.At && t.pushes.Add(1)%drainEvery != 0 {
		return listedOK // the armed timer, or a later firing, finds it in time
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		if d.taken {
			return listedOK // Close took it and ends its call
		}
		return listClosed
	case t.retired:
		return listRetired // d stays in an inbox nobody reads
	}
	t.moveInbox()
	if t.n >= t.sweepAt {
		t.sweep()
	}
	if t.head != nil && (!t.isArmed || t.head.At < t.armedAt.Load()) {
		t.arm(t.head.At)
	}
	return listedOK
}

// moveInbox moves the inbox into the sorted list, dropping the entries
// that are done, and the done entries at the head of the list. Called with
// mu held.
func (t *timeline) moveInbox() {
	var in *Deadline // the inbox reversed: in the order it was pushed
	for d := t.inbox.Swap(nil); d != nil; {
		next := d.next
		d.taken = true
		if !d.done.Load() {
			d.next, in = in, d
		} else {
			d.next = nil
		}
		d = next
	}
	t.dropDoneHead()
	var last *Deadline // the entry inserted last: the next one is usually just after it
	for d := in; d != nil; {
		next := d.next
		t.insert(d, last)
		last, d = d, next
	}
}

// insert lists d, walking from after (when it is listed and not later
// than d) or from the head. Called with mu held.
func (t *timeline) insert(d, after *Deadline) {
	d.next = nil
	switch {
	case t.tail == nil:
		t.head, t.tail = d, d
	case t.tail.At <= d.At:
		t.tail.next, t.tail = d, d
	case d.At < t.head.At:
		d.next, t.head = t.head, d
	default:
		p := t.head // p.At <= d.At < tail.At: p stops before the tail
		if after != nil && after.At <= d.At {
			p = after
		}
		for p.next.At <= d.At {
			p = p.next
		}
		d.next, p.next = p.next, d
	}
	t.n++
}

// dropDoneHead unlists the done entries at the head. Called with mu held.
func (t *timeline) dropDoneHead() {
	for t.head != nil && t.head.done.Load() {
		t.pop()
	}
}

// pop unlists the head. Called with mu held.
func (t *timeline) pop() *Deadline {
	d := t.head
	t.head, d.next = d.next, nil
	if t.head == nil {
		t.tail = nil
	}
	t.n--
	return d
}

// sweep unlists every done entry and sets the length at which the next
// sweep runs to twice what is left, so sweeping costs O(1) per add.
// Called with mu held.
func (t *timeline) sweep() {
	var prev *Deadline
	for d := t.head; d != nil; {
		next := d.next
		if d.done.Load() {
			if prev == nil {
				t.head = next
			} else {
				prev.next = next
			}
			d.next = nil
			t.n--
		} else {
			prev = d
		}
		d = next
	}
	t.tail = prev
	t.sweepAt = max(minSweep, 2*t.n)
}

// arm sets the timer to fire at at. Called with mu held. armedN counts an
// armed timer (or its running func) so that close can wait for the timer
// goroutine to be gone.
func (t *timeline) arm(at int64) {
	d := time.Duration(at - t.now())
	if !t.isArmed {
		t.armedN++
		t.isArmed = true
	} else if !t.timer.Stop() {
		// The timer has fired and fire is on its way to mu; it will
		// re-arm for the head, which is now at or before at.
		return
	}
	if t.timer == nil {
		t.timer = time.AfterFunc(d, t.fire)
	} else {
		t.timer.Reset(d)
	}
	t.armedAt.Store(at)
}

// fire moves the inbox into the list, expires every due live deadline,
// drops the done ones it meets, then re-arms for the next entry or lets the
// timer rest if the list is empty.
func (t *timeline) fire() {
	defer t.disarmed()
	t.mu.Lock()
	now := t.now() // after the lock: a clock read before it would be late by the wait
	t.isArmed = false
	// Before the inbox is moved: an entry pushed after the move finds no
	// timer and takes the lock (see add).
	t.armedAt.Store(noTimer)
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.moveInbox()
	var due []*Deadline
	for t.head != nil && (t.head.At <= now || t.head.done.Load()) {
		if d := t.pop(); !d.done.Load() {
			due = append(due, d)
		}
	}
	if t.head != nil {
		t.rearm(t.head.At, now)
	}
	if len(due) == 0 {
		t.retireIfIdle()
		t.mu.Unlock()
		return
	}
	// The expiries run outside the lock (they touch the breaker, complete
	// futures and cancel contexts, whose callbacks may call back into the
	// executor) and may list grace entries here. While they run the
	// timeline must stay published, so that Close finds it and knows
	// about their goroutines.
	//
	// A call's expiry runs user code (its classifier, transition
	// listeners), which may block or end its goroutine: each runs on a
	// goroutine of its own, so that one call's callbacks never delay
	// another call's future. Expiries are rare (a healthy supplier's calls
	// end before their deadlines). Each such goroutine counts in armedN,
	// as the timer's does, so that Close waits for it, as long as its ctx
	// allows. The end of a grace period only resolves a future: it runs
	// here.
	own := 0
	for _, d := range due {
		if !d.Inline {
			own++
		}
	}
	t.expiring += 1 + own
	t.armedN += own
	t.mu.Unlock()
	for _, d := range due {
		if d.Inline {
			d.Owner.Expired(d.Kind)
		} else {
			go t.expire(d)
		}
	}
	t.mu.Lock()
	t.expiring--
	t.retireIfIdle()
	t.mu.Unlock()
}

// expire tells d's owner that d passed, on a goroutine of its own.
func (t *timeline) expire(d *Deadline) {
	// Deferred, so that a callback that ends the goroutine
	// (runtime.Goexit) still leaves the accounting right.
	defer func() {
		t.mu.Lock()
		t.expiring--
		t.retireIfIdle()
		t.disarmedLocked()
		t.mu.Unlock()
	}()
	d.Owner.Expired(d.Kind)
}

// retireIfIdle unpublishes an empty timeline with no timer armed and no
// expiry running, so that an idle executor keeps no timer. Called with mu
// held.
func (t *timeline) retireIfIdle() {
	if t.head == nil && !t.isArmed && t.expiring == 0 && !t.closed && t.slot != nil {
		t.retired = true
		t.slot.CompareAndSwap(t, nil)
	}
}

// disarmed ends one armed period: the timer's func has returned.
func (t *timeline) disarmed() {
	t.mu.Lock()
	t.disarmedLocked()
	t.mu.Unlock()
}

func (t *timeline) disarmedLocked() {
	if t.armedN--; t.armedN == 0 && t.gone != nil {
		close(t.gone)
	}
}

// rearm sets the timer again from within fire. Called with mu held.
func (t *timeline) rearm(at, now int64) {
	t.armedN++
	t.isArmed = true
	t.timer.Reset(time.Duration(at - now))
	t.armedAt.Store(at)
}

// close stops the timer and returns the live entries still listed,
// unlisted, for the caller to end, and a channel that closes once the
// timer's goroutine is gone (nil if none runs). The caller waits on it no
// longer than it wants to: the goroutine may be inside a user's transition
// listener.
func (t *timeline) close() ([]*Deadline, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	t.armedAt.Store(noTimer)
	if t.isArmed && t.timer.Stop() {
		t.isArmed = false
		t.disarmedLocked()
	}
	t.moveInbox() // marks them taken: their adders leave them to Close
	var left []*Deadline
	for t.head != nil {
		if d := t.pop(); !d.done.Load() {
			left = append(left, d)
		}
	}
	if t.armedN == 0 {
		return left, nil
	}
	t.gone = make(chan struct{})
	return left, t.gone
}

// Live reports whether a timeline is published: false for an idle Lazy,
// which holds no timer.
func (l *Lazy) Live() bool {
	t := l.p.Load()
	return t != nil && t != closedTimeline
}

// CountOld counts the live entries whose owners' Since is at or before
// cutoff, stopping at need, and returns the earliest Since of the others
// (math.MaxInt64 if none). span is the longest time from an entry's Since
// to its At, so the walk (in At order) stops where even the earliest
// possible Since is after cutoff.
func (l *Lazy) CountOld(cutoff, span int64, need int) (old int, next int64) {
	next = math.MaxInt64
	t := l.p.Load()
	if t == nil || t == closedTimeline {
		return 0, next
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed && !t.retired {
		t.moveInbox()
	}
	d := t.head
	for ; d != nil && d.At-span <= cutoff; d = d.next {
		if d.done.Load() {
			continue
		}
		if start := d.Owner.Since(d.Kind); start > cutoff {
			next = min(next, start)
			continue
		}
		if old++; old >= need {
			return old, next
		}
	}
	if d != nil {
		next = min(next, d.At-span) // the rest started after this
	}
	return old, next
}
