package dashboard_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
)

// A supplier with an adaptive limit shows it as its slots, with the reason
// of its last change; a fixed one shows Slots and no reason.
func TestATileShowsTheAdaptiveLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := config
		cfg.Adaptive = executor.AdaptiveConfig{Max: 64, Initial: 7}
		ex, err := executor.New("payments", cfg)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, ex.Close(context.Background())) })
		h := newHandler(t, dashboard.Options{})
		h.Add(ex)
		h.Add(newExecutor(t, "search"))

		s := snapshot(t, h)
		pay, search := tile(t, s, "payments"), tile(t, s, "search")
		assert.True(t, pay.Adaptive)
		assert.Equal(t, 7, pay.Slots)
		assert.Equal(t, "initial", pay.LimitReason)
		assert.False(t, search.Adaptive)
		assert.Empty(t, search.LimitReason)
	})
}
