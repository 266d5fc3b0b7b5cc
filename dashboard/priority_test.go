package dashboard_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/priority"
)

func TestSnapshotCountsRefusalsByPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, "search")
		h := newHandler(t, dashboard.Options{})
		h.Add(ex)
		ex.Breaker().ForceOpen()
		for _, p := range []priority.Priority{priority.Sheddable, priority.Sheddable, priority.Critical, priority.Default} {
			_, err := ex.Lease(priority.With(t.Context(), p))
			require.ErrorIs(t, err, breaker.ErrOpen)
		}
		got := tile(t, snapshot(t, h), "search").Totals.RejectedByPriority
		assert.Equal(t, map[string]uint64{"critical": 1, "default": 1, "sheddable": 2}, got)
	})
}
