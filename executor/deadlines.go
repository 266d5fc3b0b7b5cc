package executor

import (
	"sync"
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
	epoch      *time.Time // the executor's; times are ns since it (monotonic)
	mu         sync.Mutex
	head, tail *deadline
	timer      *time.Timer
	fireAt     int64          // when the armed timer fires
	armed      sync.WaitGroup // 1 while the timer is armed or its func runs
	isArmed    bool
	closed     bool
}

// now reads the timeline's clock.
func (t *timeline) now() int64 { return int64(time.Since(*t.epoch)) }

// add lists d (d.at set by the caller). It returns false once the
// timeline is closed: the executor is closing and d's call must end now.
func (t *timeline) add(d *deadline) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
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
	if !t.isArmed || d.at < t.fireAt {
		t.arm(d.at)
	}
	return true
}

// remove unlists d if it is still listed.
func (t *timeline) remove(d *deadline) {
	t.mu.Lock()
	if d.listed {
		t.unlink(d)
	}
	t.mu.Unlock()
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

// arm sets the timer to fire at at. Called with mu held. The WaitGroup
// counts an armed timer (or its running func) so that close can wait for
// the timer goroutine to be gone.
func (t *timeline) arm(at int64) {
	d := time.Duration(at - t.now())
	if !t.isArmed {
		t.armed.Add(1)
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
	defer t.armed.Done()
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
		t.armed.Add(1)
		t.isArmed = true
		t.fireAt = t.head.at
		t.timer.Reset(time.Duration(t.head.at - now))
	}
	t.mu.Unlock()
	// Outside the lock: expire touches the breaker, completes futures and
	// cancels contexts, whose callbacks may call back into the executor.
	for _, e := range due {
		e.expire()
	}
}

// close stops the timer, waits until its goroutine is gone, and returns the
// entries still listed, unlisted, for the caller to expire.
func (t *timeline) close() []expirer {
	t.mu.Lock()
	t.closed = true
	if t.isArmed && t.timer.Stop() {
		t.isArmed = false
		t.armed.Done()
	}
	var left []expirer
	for t.head != nil {
		left = append(left, t.head.owner)
		t.unlink(t.head)
	}
	t.mu.Unlock()
	t.armed.Wait()
	return left
}
