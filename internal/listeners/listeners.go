// Package listeners is a list of listeners that may change while it is
// read: adding and removing one copy the list under a lock, and Each
// reads the list in force without one, so that dispatching an event costs
// one atomic load. The executor's Group keeps its Subscribe listeners in
// one.
package listeners

import (
	"slices"
	"sync"
	"sync/atomic"
)

// List is a list of listeners of type F. The zero List is empty and ready
// to use; it must not be copied once used. Safe for concurrent use.
type List[F any] struct {
	mu   sync.Mutex // serialises changes; Each reads list without it
	next uint64
	// list is replaced whole on every change, never modified in place.
	list atomic.Pointer[[]entry[F]]
}

type entry[F any] struct {
	id uint64
	fn F
}

// Add appends fn and returns the function that removes it again (once;
// later calls do nothing).
func (l *List[F]) Add(fn F) (remove func()) {
	l.mu.Lock()
	l.next++
	id := l.next
	l.replace(func(es []entry[F]) []entry[F] { return append(es, entry[F]{id, fn}) })
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.replace(func(es []entry[F]) []entry[F] {
			return slices.DeleteFunc(es, func(e entry[F]) bool { return e.id == id })
		})
	}
}

// replace publishes change applied to a copy of the list; l.mu is held.
func (l *List[F]) replace(change func([]entry[F]) []entry[F]) {
	var cur []entry[F]
	if p := l.list.Load(); p != nil {
		cur = slices.Clone(*p)
	}
	next := change(cur)
	l.list.Store(&next)
}

// Each calls f with every listener of the list in force when it starts,
// in the order they were added.
func (l *List[F]) Each(f func(F)) {
	p := l.list.Load()
	if p == nil {
		return
	}
	for _, e := range *p {
		f(e.fn)
	}
}
