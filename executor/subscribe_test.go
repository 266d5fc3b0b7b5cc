package executor_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// seen collects events safely: subscribers of different executors may be
// called concurrently.
type seen struct {
	mu  sync.Mutex
	all []string
}

func (s *seen) listen(e breaker.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, e.String())
}

func (s *seen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.all...)
}

func TestSubscribe(t *testing.T) {
	t.Run("subscribers watch every executor, after the configured listener, until they leave", func(t *testing.T) {
		var order []string
		g := newGroup(t, executor.GroupConfig{
			Suppliers: map[string]executor.Config{
				"search": {Breaker: breaker.Config{OnTransition: func(e breaker.Event) { order = append(order, "search's own") }}},
			},
			OnTransition: func(e breaker.Event) { order = append(order, "group's") },
		})
		a, b := &seen{}, &seen{}
		stopA := g.Subscribe(a.listen)
		g.Subscribe(b.listen)
		g.Subscribe(func(breaker.Event) { order = append(order, "subscriber") })

		pay, err := g.Executor("payments") // made after Subscribe
		require.NoError(t, err)
		pay.Breaker().Trip(breaker.Manual)
		search, _ := g.Lookup("search") // made at NewGroup, before Subscribe
		search.Breaker().Trip(breaker.Manual)
		assert.Equal(t, []string{"group's", "subscriber", "search's own", "subscriber"}, order)

		stopA()
		stopA() // harmless
		pay.Breaker().Reset()
		assert.Equal(t, []string{"payments: closed → open (manual)", "search: closed → open (manual)"}, a.list())
		assert.Equal(t, []string{"payments: closed → open (manual)", "search: closed → open (manual)", "payments: open → closed (manual)"}, b.list())
	})
	t.Run("a subscriber that panics does not keep the event from the others", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		s := &seen{}
		g.Subscribe(func(breaker.Event) { panic("dashboard bug") })
		g.Subscribe(s.listen)
		ex, err := g.Executor("payments")
		require.NoError(t, err)
		require.NotPanics(t, func() { ex.Breaker().Trip(breaker.Manual) })
		assert.Len(t, s.list(), 1)
	})
	t.Run("a nil subscriber is ignored", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		g.Subscribe(nil)()
		ex, err := g.Executor("payments")
		require.NoError(t, err)
		require.NotPanics(t, func() { ex.Breaker().Trip(breaker.Manual) })
	})
}

func TestSubscribeRacesWithTransitions(t *testing.T) {
	g := newGroup(t, executor.GroupConfig{})
	ex, err := g.Executor("payments")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				stop := g.Subscribe(func(breaker.Event) {})
				stop()
			}
		})
	}
	wg.Go(func() {
		for range 200 {
			ex.Breaker().Trip(breaker.Manual)
			ex.Breaker().Reset()
		}
	})
	wg.Wait()
	assert.Equal(t, breaker.Closed, ex.Breaker().State())
}
