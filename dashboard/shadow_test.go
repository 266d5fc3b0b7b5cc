package dashboard_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
)

// A supplier in shadow mode shows as such, with what enforce mode would
// have refused; an enforcing one does not.
func TestATileShowsShadowModeAndWhatItWouldHaveRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config
		cfg.Shadow = true
		ex, err := executor.New("payments", cfg)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, ex.Close(context.Background())) })
		h := newHandler(t, dashboard.Options{})
		h.Add(ex)
		h.Add(newExecutor(t, "search"))
		ex.Breaker().Trip(breaker.Manual)
		for range 2 {
			_, err := executor.Do(context.Background(), ex, func(context.Context) (int, error) { return 1, nil })
			require.NoError(t, err)
		}

		s := snapshot(t, h)
		pay := tile(t, s, "payments")
		assert.True(t, pay.Shadow)
		assert.Equal(t, "open", pay.State, "what enforce mode would be in")
		assert.Equal(t, uint64(2), pay.Totals.Shadowed["open"])
		assert.Zero(t, pay.Totals.Rejected["open"], "nothing refused")
		assert.False(t, tile(t, s, "search").Shadow)
	})
}
