package executor_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

func TestDoOr(t *testing.T) {
	fallback := func(_ context.Context, err error) (string, error) { return "fallback after " + err.Error(), nil }
	t.Run("a success never calls the fallback", func(t *testing.T) {
		ex := newExecutor(t, executor.Config{})
		v, err := executor.DoOr(context.Background(), ex, func(context.Context) (string, error) { return "fresh", nil }, fallback)
		require.NoError(t, err)
		assert.Equal(t, "fresh", v)
	})
	t.Run("an open breaker falls back", func(t *testing.T) {
		ex := newExecutor(t, executor.Config{})
		ex.Breaker().Trip(breaker.Manual)
		v, err := executor.DoOr(context.Background(), ex, func(context.Context) (string, error) { return "fresh", nil }, fallback)
		require.NoError(t, err)
		assert.Contains(t, v, "rejected: open")
	})
	t.Run("a saturated bulkhead falls back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{Slots: 1})
			release := make(chan struct{})
			f, err := executor.Submit(context.Background(), ex, func(context.Context) (string, error) { <-release; return "", nil })
			require.NoError(t, err)
			v, err := executor.DoOr(context.Background(), ex, func(context.Context) (string, error) { return "fresh", nil }, fallback)
			require.NoError(t, err)
			assert.Contains(t, v, "rejected: busy", "a young call holds the slot: busy, not stuck")
			close(release)
			f.Await(context.Background())
		})
	})
	t.Run("a timeout falls back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{InvocationTimeout: time.Second})
			v, err := executor.DoOr(context.Background(), ex, func(ctx context.Context) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}, fallback)
			require.NoError(t, err)
			assert.Contains(t, v, "invocation timeout")
		})
	})
	t.Run("the supplier's own error is returned, not hidden", func(t *testing.T) {
		ex := newExecutor(t, executor.Config{})
		_, err := executor.DoOr(context.Background(), ex, func(context.Context) (string, error) { return "", errBoom }, fallback)
		assert.ErrorIs(t, err, errBoom)
	})
	t.Run("a closed executor does not fall back", func(t *testing.T) {
		ex := newExecutor(t, executor.Config{})
		require.NoError(t, ex.Close(context.Background()))
		_, err := executor.DoOr(context.Background(), ex, func(context.Context) (string, error) { return "fresh", nil }, fallback)
		assert.ErrorIs(t, err, executor.ErrClosed)
	})
	t.Run("the caller's own deadline does not fall back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{InvocationTimeout: time.Minute, Breaker: breaker.Config{ResetTimeout: 2 * time.Minute}})
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err := executor.DoOr(ctx, ex, func(ctx context.Context) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}, fallback)
			assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
		})
	})
	t.Run("DoInOr falls back for a group's supplier, not for an unknown name", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Strict: true, Suppliers: map[string]executor.Config{"prices": {}}})
		ex, _ := g.Lookup("prices")
		ex.Breaker().Trip(breaker.Manual)
		v, err := executor.DoInOr(context.Background(), g, "prices", func(context.Context) (string, error) { return "fresh", nil }, fallback)
		require.NoError(t, err)
		assert.Contains(t, v, "rejected: open")
		_, err = executor.DoInOr(context.Background(), g, "pricse", func(context.Context) (string, error) { return "fresh", nil }, fallback)
		assert.ErrorIs(t, err, executor.ErrUnknownSupplier)
	})
}
