package fusepgx_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusepgx"
)

// Bad configurations are errors naming the field; nothing panics.
func TestBadConfigurationsAreErrors(t *testing.T) {
	t.Parallel()
	g, err := executor.NewGroup(executor.GroupConfig{Suppliers: map[string]executor.Config{"db": {Slots: 3}, "orders": {Slots: 5}}, Strict: true})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close(context.Background()) })
	ctx := context.Background()

	for _, tc := range []struct {
		name string
		cfg  fusepgx.Config
		want string
	}{
		{"no group", fusepgx.Config{}, "Config.Group is nil"},
		{"a blank default", fusepgx.Config{Group: g, Default: " "}, "Config.Default"},
		{"an empty supplier", fusepgx.Config{Group: g, Suppliers: []string{""}}, "Config.Suppliers[0] is empty"},
		{"a supplier a strict group does not list", fusepgx.Config{Group: g, Suppliers: []string{"payments"}}, `supplier "payments"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fusepgx.New(ctx, poolConfig(t), tc.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("New without a pool configuration", func(t *testing.T) {
		_, err := fusepgx.New(ctx, nil, fusepgx.Config{Group: g})
		require.ErrorContains(t, err, "poolConfig is nil")
	})
	t.Run("Wrap of a pool smaller than the slots", func(t *testing.T) {
		_, err := fusepgx.Wrap(plainPool(t, 7), fusepgx.Config{Group: g, Suppliers: []string{"orders"}})
		require.ErrorContains(t, err, "MaxConns is 7 but the slots of db, orders may hold 8")
		p, err := fusepgx.Wrap(plainPool(t, 8), fusepgx.Config{Group: g, Suppliers: []string{"orders"}})
		require.NoError(t, err)
		assert.Equal(t, 8, p.Connections())
	})
	t.Run("a call naming an unlisted supplier", func(t *testing.T) {
		p, err := fusepgx.New(ctx, poolConfig(t), fusepgx.Config{Group: g})
		require.NoError(t, err)
		defer p.Close()
		_, err = p.Exec(fusepgx.WithSupplier(ctx, "orders"), "SELECT 1")
		require.ErrorIs(t, err, executor.ErrUnknownSupplier)
		assert.ErrorContains(t, err, `"orders"`)
		//lint:ignore SA1012 a nil context on purpose
		_, err = p.Exec(nil, "SELECT 1")
		require.ErrorContains(t, err, "nil context")
	})
	t.Run("a Pool that New did not make", func(t *testing.T) {
		for _, p := range []*fusepgx.Pool{nil, {}} {
			_, err := p.Exec(ctx, "SELECT 1")
			require.ErrorContains(t, err, "fusepgx.New")
			var n int
			require.ErrorContains(t, p.QueryRow(ctx, "SELECT 1").Scan(&n), "fusepgx.New")
			_, err = p.Begin(ctx)
			require.ErrorContains(t, err, "fusepgx.New")
			require.ErrorContains(t, p.SendBatch(ctx, &pgx.Batch{}).Close(), "fusepgx.New")
			assert.Zero(t, p.Connections())
			assert.Nil(t, p.Pgx())
			p.Close()
		}
	})
	t.Run("SendBatch of a nil batch", func(t *testing.T) {
		p, err := fusepgx.New(ctx, poolConfig(t), fusepgx.Config{Group: g})
		require.NoError(t, err)
		defer p.Close()
		require.ErrorContains(t, p.SendBatch(ctx, nil).Close(), "nil *pgx.Batch")
	})
}
