package fusehttp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

func TestNamesMapAddressesToSuppliers(t *testing.T) {
	t.Run("a mapped host:port runs on the named supplier, others keep their address", func(t *testing.T) {
		payments, other := newUpstream(t), newUpstream(t)
		g := newGroup(t, executor.GroupConfig{Suppliers: map[string]executor.Config{"payments": {Slots: 3}}})
		client := newClient(t, &fusehttp.Transport{Group: g, Names: map[string]string{payments.key(t): "payments"}})
		for range 2 {
			_, _, err := get(t, client, payments.URL)
			require.NoError(t, err)
		}
		_, _, err := get(t, client, other.URL)
		require.NoError(t, err)
		st := stats(t, g, "payments")
		assert.Equal(t, 3, st.Slots, "the supplier's own configuration")
		assert.Equal(t, uint64(2), st.Successes)
		assert.Equal(t, uint64(1), stats(t, g, other.key(t)).Successes)
		_, ok := g.Lookup(payments.key(t))
		assert.False(t, ok, "no executor under the address of a mapped upstream")
	})
	t.Run("a host name alone maps every port of the host", func(t *testing.T) {
		a, b := newUpstream(t), newUpstream(t)
		g := newGroup(t, executor.GroupConfig{})
		client := newClient(t, &fusehttp.Transport{Group: g, Names: map[string]string{"127.0.0.1": "local"}})
		for _, u := range []string{a.URL, b.URL} {
			_, _, err := get(t, client, u)
			require.NoError(t, err)
		}
		assert.Equal(t, uint64(2), stats(t, g, "local").Successes)
		assert.Equal(t, []string{"local"}, g.Names())
	})
	t.Run("with a Strict group, Names is an allow-list of upstreams", func(t *testing.T) {
		known, unknown := newUpstream(t), newUpstream(t)
		g := newGroup(t, executor.GroupConfig{Strict: true, Suppliers: map[string]executor.Config{"payments": {}}})
		client := newClient(t, &fusehttp.Transport{Group: g, Names: map[string]string{known.key(t): "payments"}})
		_, _, err := get(t, client, known.URL)
		require.NoError(t, err)
		_, _, err = get(t, client, unknown.URL)
		require.ErrorIs(t, err, executor.ErrUnknownSupplier)
		assert.Zero(t, unknown.hits.Load(), "a refused request is never sent")
		assert.Equal(t, []string{"payments"}, g.Names())
	})
}
