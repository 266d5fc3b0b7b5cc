package metrics_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/metrics"
)

func TestCollectorReportsTheAdaptiveLimit(t *testing.T) {
	g, err := executor.NewGroup(executor.GroupConfig{Suppliers: map[string]executor.Config{
		"fixed": {Slots: 4}, "adaptive": {Slots: 12, Adaptive: executor.AdaptiveConfig{Max: 64}},
	}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close(context.Background())) })
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(metrics.NewCollector(g, metrics.Opts{})))
	want := `
# HELP fusebox_limit_gradient The adaptive limit's last gradient, 1.5 × baseline / window mean latency in [0.5, 1]: below 1 the limit was cut by it (1 with a fixed bulkhead).
# TYPE fusebox_limit_gradient gauge
fusebox_limit_gradient{supplier="adaptive"} 1
fusebox_limit_gradient{supplier="fixed"} 1
# HELP fusebox_slots_limit The bulkhead's slots: executor.Config.Slots, or with executor.Config.Adaptive the limit in force.
# TYPE fusebox_slots_limit gauge
fusebox_slots_limit{supplier="adaptive"} 12
fusebox_slots_limit{supplier="fixed"} 4
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "fusebox_slots_limit", "fusebox_limit_gradient"))
}
