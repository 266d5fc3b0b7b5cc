package executor

import (
	"log/slog"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/internal/listeners"
)

// subscribers are the listeners attached to a running Group.
type subscribers struct {
	listeners.List[func(breaker.Event)]
}

// Subscribe attaches fn to every executor of the group, present and
// future, after its own listener, until the returned func is called. Keep
// fn fast; a panic in it is recovered and logged.
func (g *Group) Subscribe(fn func(breaker.Event)) (unsubscribe func()) {
	if fn == nil || g == nil {
		return func() {}
	}
	return g.subs.Add(fn)
}

// dispatch hands e to every subscriber.
func (s *subscribers) dispatch(e breaker.Event) {
	s.Each(func(fn func(breaker.Event)) { callSubscriber(fn, e) })
}

func callSubscriber(fn func(breaker.Event), e breaker.Event) {
	_, err := breaker.Guard("Group.Subscribe listener", func() (struct{}, error) { fn(e); return struct{}{}, nil }, nil)
	if pe, ok := err.(*breaker.PanicError); ok {
		slog.Error("fusebox: Group.Subscribe listener panicked",
			"event", e.String(), "panic", pe.Value, "stack", string(pe.Stack))
	}
}
