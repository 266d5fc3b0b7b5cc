package fuseboxtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/fusebox-go/fusebox/breaker"
)

// Recorder records breaker transition events and lets a test wait for
// them. Give its Listen method to breaker.Config.OnTransition,
// executor.GroupConfig.OnTransition or Group.Subscribe.
//
// The waits read the events in order, with a cursor: each returns the first
// event after the ones earlier waits returned, so an event that happened
// before the wait began is found at once. They block on channels only, so
// inside a testing/synctest bubble a wait that nothing can satisfy is
// reported as a deadlock instead of hanging the test.
//
// The zero Recorder is ready to use. It is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	events  []breaker.Event
	next    int           // the cursor: events before it were returned by a wait
	changed chan struct{} // made by a waiter, closed by the next event
}

// Listen records e. It is a transition listener.
func (r *Recorder) Listen(e breaker.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	ch := r.changed
	r.changed = nil
	r.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// Events returns every event recorded so far, in the order they arrived.
func (r *Recorder) Events() []breaker.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]breaker.Event(nil), r.events...)
}

// WaitFor waits for the next event that match accepts and returns it. If
// ctx ends first it returns an error that matches ctx.Err() and lists the
// events it looked at. A nil ctx or match is an error.
func (r *Recorder) WaitFor(ctx context.Context, match func(breaker.Event) bool) (breaker.Event, error) {
	switch {
	case ctx == nil:
		return breaker.Event{}, errNilContext
	case match == nil:
		return breaker.Event{}, errors.New("fuseboxtest: WaitFor with a nil match function")
	}
	from := -1
	for {
		evs, start, changed := r.unread()
		if from < start {
			from = start
		}
		for i := from - start; i < len(evs); i++ {
			if match(evs[i]) {
				r.advance(start + i + 1)
				return evs[i], nil
			}
		}
		from = start + len(evs)
		select {
		case <-changed:
		case <-ctx.Done():
			return breaker.Event{}, r.gaveUp(ctx, "a matching event", evs)
		}
	}
}

// WaitForState waits for the next event that enters state s (To == s) and
// returns it. With a Group, the events of every supplier count; use
// WaitFor to wait for one supplier's.
func (r *Recorder) WaitForState(ctx context.Context, s breaker.State) (breaker.Event, error) {
	e, err := r.WaitFor(ctx, func(e breaker.Event) bool { return e.To == s })
	if err != nil {
		return e, fmt.Errorf("waiting for state %s: %w", s, err)
	}
	return e, nil
}

// WaitForEvents waits until n events follow the cursor and returns them.
// A nil ctx, or an n below 0, is an error.
func (r *Recorder) WaitForEvents(ctx context.Context, n int) ([]breaker.Event, error) {
	switch {
	case ctx == nil:
		return nil, errNilContext
	case n < 0:
		return nil, fmt.Errorf("fuseboxtest: WaitForEvents wants n ≥ 0 events, got %d", n)
	}
	for {
		evs, start, changed := r.unread()
		if len(evs) >= n {
			r.advance(start + n)
			return evs[:n:n], nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, r.gaveUp(ctx, fmt.Sprintf("%d events", n), evs)
		}
	}
}

// errNilContext is the error of a wait given a nil context.
var errNilContext = errors.New("fuseboxtest: a wait with a nil context (use context.Background())")

// unread returns the events after the cursor, the cursor, and a channel
// that is closed at the next event. The slice is shared: events are only
// appended, so its elements never change.
func (r *Recorder) unread() ([]breaker.Event, int, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		// Made here, by the waiter, so that it belongs to the waiter's
		// synctest bubble.
		r.changed = make(chan struct{})
	}
	return r.events[r.next:len(r.events):len(r.events)], r.next, r.changed
}

// advance moves the cursor to i, never back (for concurrent waits).
func (r *Recorder) advance(i int) {
	r.mu.Lock()
	r.next = max(r.next, i)
	r.mu.Unlock()
}

func (r *Recorder) gaveUp(ctx context.Context, what string, seen []breaker.Event) error {
	names := make([]string, len(seen))
	for i, e := range seen {
		names[i] = e.String()
	}
	return fmt.Errorf("fuseboxtest: gave up waiting for %s; the %d unread events: [%s]: %w",
		what, len(seen), strings.Join(names, "; "), ctx.Err())
}
