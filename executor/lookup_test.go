package executor_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
)

func TestLookupAndNames(t *testing.T) {
	t.Run("configured suppliers exist from the start; lookups never create", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Suppliers: map[string]executor.Config{"payments": {Slots: 3}, "search": {}}})
		assert.Equal(t, []string{"payments", "search"}, g.Names(), "listed suppliers before any call")
		ex, ok := g.Lookup("payments")
		require.True(t, ok)
		assert.Equal(t, 3, ex.Stats().Slots)

		_, ok = g.Lookup("paymnets")
		assert.False(t, ok)
		assert.Equal(t, []string{"payments", "search"}, g.Names(), "a lookup of a typo added a supplier")

		made, err := g.Executor("catalog")
		require.NoError(t, err)
		found, ok := g.Lookup("catalog")
		require.True(t, ok)
		assert.Same(t, made, found)
		assert.Equal(t, []string{"catalog", "payments", "search"}, g.Names())
	})
	t.Run("a closed group still finds its executors, which refuse calls", func(t *testing.T) {
		g, err := executor.NewGroup(executor.GroupConfig{Suppliers: map[string]executor.Config{"payments": {}}})
		require.NoError(t, err)
		require.NoError(t, g.Close(context.Background()))
		ex, ok := g.Lookup("payments")
		require.True(t, ok)
		_, err = executor.Do(context.Background(), ex, func(context.Context) (int, error) { return 1, nil })
		assert.ErrorIs(t, err, executor.ErrClosed)
	})
}

func TestStrictGroups(t *testing.T) {
	deps := map[string]executor.Config{"payments": {}, "search": {}}
	t.Run("a name the configuration does not list is refused with a clear error", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Strict: true, Suppliers: deps})
		_, err := g.Executor("paymnets")
		require.ErrorIs(t, err, executor.ErrUnknownSupplier)
		assert.EqualError(t, err, `executor: unknown supplier "paymnets": the group is Strict and its configuration lists only payments, search`)
		_, err = executor.DoIn(context.Background(), g, "paymnets", func(context.Context) (int, error) { return 1, nil })
		require.ErrorIs(t, err, executor.ErrUnknownSupplier)
		assert.Equal(t, []string{"payments", "search"}, g.Names(), "no phantom supplier")

		v, err := executor.DoIn(context.Background(), g, "payments", func(context.Context) (int, error) { return 1, nil })
		require.NoError(t, err)
		assert.Equal(t, 1, v)
	})
	t.Run("a long list is cut short in the error", func(t *testing.T) {
		many := map[string]executor.Config{}
		for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
			many[n] = executor.Config{}
		}
		g := newGroup(t, executor.GroupConfig{Strict: true, Suppliers: many})
		_, err := g.Executor("z")
		assert.ErrorContains(t, err, "lists only a, b, c, d, e, f, g, h, i, j, and 2 more")
	})
	t.Run("strict without suppliers is refused up front", func(t *testing.T) {
		_, err := executor.NewGroup(executor.GroupConfig{Strict: true})
		assert.ErrorContains(t, err, "GroupConfig.Strict needs Suppliers")
	})
}

func TestConfiguredSuppliersAreNeverEvicted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{
			IdleTimeout: time.Minute,
			Suppliers:   map[string]executor.Config{"payments": {}},
		})
		for _, name := range []string{"payments", "host-1"} {
			_, err := executor.DoIn(context.Background(), g, name, func(context.Context) (int, error) { return 1, nil })
			require.NoError(t, err)
		}
		before, _ := g.Lookup("payments")
		for range 3 {
			time.Sleep(time.Minute + time.Second)
			g.Executor("anything") // lookups drive the eviction sweep
		}
		assert.NotContains(t, g.Names(), "host-1", "an unlisted idle executor is evicted")
		after, ok := g.Lookup("payments")
		require.True(t, ok)
		assert.Same(t, before, after, "a listed supplier stays, with its series")
	})
}
