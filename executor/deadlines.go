package executor

import (
	"sync"
	"sync/atomic"
	"time"
)

// expirer is what a deadline belongs to: its expire runs on the timer's
// goroutine when the deadline passes while the entry is still listed.
type expirer interface{ expire() }

// deadline is an entry of a timeline, embedded in the call it times, so
// timing a call allocates nothing.
type deadline struct {
	prev, next *deadline
	at         int64 // ns since the timeline's epoch
	owner      expirer
	listed     bool
	tl         atomic.Pointer[timeline] // the timeline it was last added to
}

// timeline is the executor's deadline machinery: one list of pending
// deadlines sorted by time and ONE timer, armed for the earliest of them,
// instead of a timer and a context.WithDeadline per call (~800 ns and 4
// allocations, more than a whole Submit). Calls leave the list when they
// end; the timer runs only while calls are in flight and stops by itself
// when it finds the list empty.
//
// Entries are appended at the tail and walk back past later deadlines, so
// insertion is O(1) when deadlines arrive in order (one executor's calls
// all have the same timeout) and O(k) for a call whose caller has a
// deadline k entries earlier; the list never holds more than the
// bulkhead's slots (or queue places).
type timeline struct {
	epoch      *time.Time                // the executor's; times are ns since it (monotonic)
	slot       *atomic.Pointer[timeline] // where it is published; emptied when it retires
	mu         sync.Mutex
	head, tail *deadline
	timer      *time.Timer
	fireAt     int64         // when the armed timer fires
	armedN     int           // 1 while the timer is armed or its func runs
	gone       chan struct{} // made by close if armedN > 0; closed when it reaches 0
	isArmed    bool
	closed     bool
	retired    bool // found empty by its timer and unpublished: make a new one
	expiring   int  // firings running their expiries right now
}

// lazyTimeline is where an executor keeps a timeline: made when a deadline
// is added, dropped (timer and all) when its timer finds it empty, so an
// executor that had calls and is idle again holds no timeline at all. Once
// closed it holds closedTimeline for good, so nothing can be added.
type lazyTimeline struct {
	p atomic.Pointer[timeline]
}

// closedTimeline refuses every deadline; a closed executor's lazyTimeline
// holds it.
var closedTimeline = &timeline{closed: true}

// add lists d on the current timeline, making one if needed. It returns
// false once the executor is closing: d's call must end now.
func (l *lazyTimeline) add(d *deadline, epoch *time.Time) bool {
	for {
		t := l.p.Load()
		if t == nil {
			n := &timeline{epoch: epoch, slot: &l.p}
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

// remove unlists d from the timeline it is on, if any.
func (l *lazyTimeline) remove(d *deadline) {
	for {
		t := d.tl.Load()
		if t == nil || t.remove(d) {
			return
		}
	}
}

// close closes the timeline for good and returns its entries, and a
// channel that closes once the timer's goroutine is gone (nil if there is
// none). A deadline being added concurrently either lands on the old
// timeline before it is closed (and is returned here) or finds
// closedTimeline.
func (l *lazyTimeline) close() ([]expirer, <-chan struct{}) {
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

// add lists d (d.at set by the caller).
func (t *timeline) add(d *deadline) listing {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		return listClosed
	case t.retired:
		return listRetired
	}
	after := t.tail
	for after != nil && after.at > d.at {
		after = after.prev
	}
	d.prev = after
	if after == nil {
		d.next, t.head = t.head, d
	} else {
		d.next, after.next = after.next, d
	}
	if d.next == nil {
		t.tail = d
	} else {
		d.next.prev = d
	}
	d.listed = true
	d.tl.Store(t)
	if !t.isArmed || d.at < t.fireAt {
		t.arm(d.at)
	}
	return listedOK
}

// remove unlists d if it is still listed.
// remove unlists d if it is still listed here. It reports false if d has
// meanwhile been added to another timeline (then the caller looks again).
func (t *timeline) remove(d *deadline) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d.tl.Load() != t {
		return false
	}
	if d.listed {
		t.unlink(d)
	}
	return true
}

func (t *timeline) unlink(d *deadline) {
	if d.prev == nil {
		t.head = d.next
	} else {
		d.prev.next = d.next
	}
	if d.next == nil {
		t.tail = d.prev
	} else {
		d.next.prev = d.prev
	}
	d.prev, d.next, d.listed = nil, nil, false
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
	t.fireAt = at
	if t.timer == nil {
		t.timer = time.AfterFunc(d, t.fire)
	} else {
		t.timer.Reset(d)
	}
}

// fire expires every due deadline, then re-arms for the next one or lets
// the timer rest if the list is empty.
func (t *timeline) fire() {
	defer t.disarmed()
	now := t.now()
	t.mu.Lock()
	t.isArmed = false
	if t.closed {
		t.mu.Unlock()
		return
	}
	var due []expirer
	for t.head != nil && t.head.at <= now {
		d := t.head
		due = append(due, d.owner)
		t.unlink(d)
	}
	if t.head != nil {
		t.rearm(t.head.at, now)
	}
	if len(due) == 0 {
		t.retireIfIdle()
		t.mu.Unlock()
		return
	}
	// The expiries run outside the lock (they touch the breaker, complete
	// futures and cancel contexts, whose callbacks may call back into the
	// executor) and may list grace entries here. While they run the
	// timeline must stay published: a node must never move to another
	// timeline while it can be on this one, since its links are guarded by
	// this mutex; and Close must find it, to wait for this goroutine.
	t.expiring++
	t.mu.Unlock()
	for _, e := range due {
		e.expire()
	}
	t.mu.Lock()
	t.expiring--
	t.retireIfIdle()
	t.mu.Unlock()
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
	t.fireAt = at
	t.timer.Reset(time.Duration(at - now))
}

// close stops the timer and returns the entries still listed, unlisted,
// for the caller to expire, and a channel that closes once the timer's
// goroutine is gone (nil if none runs). The caller waits on it no longer
// than it wants to: the goroutine may be inside a user's transition
// listener.
func (t *timeline) close() ([]expirer, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.isArmed && t.timer.Stop() {
		t.isArmed = false
		t.disarmedLocked()
	}
	var left []expirer
	for t.head != nil {
		left = append(left, t.head.owner)
		t.unlink(t.head)
	}
	if t.armedN == 0 {
		return left, nil
	}
	t.gone = make(chan struct{})
	return left, t.gone
}
