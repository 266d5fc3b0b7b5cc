package executor

import (
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/fusebox-go/fusebox/breaker"
)

// subscribers are the listeners attached to a running Group.
type subscribers struct {
	mu   sync.Mutex // serialises changes; dispatch reads list without it
	next uint64
	// list is replaced whole on every change, never modified in place.
	list atomic.Pointer[[]subscriber]
}

type subscriber struct {
	id uint64
	fn func(breaker.Event)
}

// Subscribe attaches fn to every executor of the group, present and
// future, after its own listener, until the returned func is called. Keep
// fn fast; a panic in it is recovered and logged.
func (g *Group) Subscribe(fn func(breaker.Event)) (unsubscribe func()) {
	if fn == nil || g == nil {
		return func() {}
	}
	s := &g.subs
	s.mu.Lock()
	s.next++
	id := s.next
	s.replace(func(l []subscriber) []subscriber { return append(l, subscriber{id, fn}) })
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.replace(func(l []subscriber) []subscriber {
			return slices.DeleteFunc(l, func(x subscriber) bool { return x.id == id })
		})
	}
}

// replace publishes change applied to a copy of the list; s.mu is held.
func (s *subscribers) replace(change func([]subscriber) []subscriber) {
	var cur []subscriber
	if p := s.list.Load(); p != nil {
		cur = slices.Clone(*p)
	}
	next := change(cur)
	s.list.Store(&next)
}

// dispatch hands e to every subscriber.
func (s *subscribers) dispatch(e breaker.Event) {
	p := s.list.Load()
	if p == nil {
		return
	}
	for _, sub := range *p {
		callSubscriber(sub.fn, e)
	}
}

func callSubscriber(fn func(breaker.Event), e breaker.Event) {
	_, err := breaker.Guard("Group.Subscribe listener", func() (struct{}, error) { fn(e); return struct{}{}, nil }, nil)
	if pe, ok := err.(*breaker.PanicError); ok {
		slog.Error("fusebox: Group.Subscribe listener panicked",
			"event", e.String(), "panic", pe.Value, "stack", string(pe.Stack))
	}
}
