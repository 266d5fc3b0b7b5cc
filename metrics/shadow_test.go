package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/metrics"
)

// A supplier in shadow mode says so, and counts what enforce mode would
// have refused; switching to enforce with Reconfigure clears the gauge.
func TestCollectorReportsShadowMode(t *testing.T) {
	cfg := executor.Config{Shadow: true, Breaker: breaker.Config{ResetTimeout: time.Hour}}
	g := newGroup(t, executor.GroupConfig{Suppliers: map[string]executor.Config{"payments": cfg}})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewCollector(g, metrics.Opts{}))
	ex := executorOf(t, g, "payments")
	ex.Breaker().Trip(breaker.Manual)
	for range 3 {
		_, err := executor.Do(context.Background(), ex, ok)
		require.NoError(t, err, "shadow: the open breaker admits")
	}
	want := `
# HELP fusebox_shadow 1 while the supplier runs in shadow mode (every rule evaluated, nothing refused), 0 while it enforces.
# TYPE fusebox_shadow gauge
fusebox_shadow{supplier="payments"} 1
# HELP fusebox_shadowed_total Calls that shadow mode ran although enforce mode would have refused them, by reason: open, saturated, queue_full, busy.
# TYPE fusebox_shadowed_total counter
fusebox_shadowed_total{reason="busy",supplier="payments"} 0
fusebox_shadowed_total{reason="open",supplier="payments"} 3
fusebox_shadowed_total{reason="queue_full",supplier="payments"} 0
fusebox_shadowed_total{reason="saturated",supplier="payments"} 0
fusebox_shadowed_total{reason="throttled",supplier="payments"} 0
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "fusebox_shadow", "fusebox_shadowed_total"))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP fusebox_rejections_total Calls refused without running, by reason: open, saturated, queue_full, closed, busy (a full bulkhead of young calls: the breaker stayed closed).
# TYPE fusebox_rejections_total counter
fusebox_rejections_total{reason="busy",supplier="payments"} 0
fusebox_rejections_total{reason="closed",supplier="payments"} 0
fusebox_rejections_total{reason="open",supplier="payments"} 0
fusebox_rejections_total{reason="queue_full",supplier="payments"} 0
fusebox_rejections_total{reason="saturated",supplier="payments"} 0
fusebox_rejections_total{reason="throttled",supplier="payments"} 0
`), "fusebox_rejections_total"), "nothing was refused")

	cfg.Shadow = false
	require.NoError(t, ex.Reconfigure(cfg))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(strings.Replace(want, `supplier="payments"} 1`, `supplier="payments"} 0`, 1)),
		"fusebox_shadow", "fusebox_shadowed_total"))
}

// Names beyond GroupConfig.MaxSuppliers share the overflow executor: the
// series stay bounded however many names the traffic brings.
func TestSeriesStayBoundedBeyondMaxSuppliers(t *testing.T) {
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer slog.SetDefault(old)
	g := newGroup(t, executor.GroupConfig{MaxSuppliers: 10})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewCollector(g, metrics.Opts{}))
	for i := range 1000 {
		_, err := executor.DoIn(context.Background(), g, "h"+strconv.Itoa(i)+".example:443", ok)
		require.NoError(t, err)
	}
	names := g.Names()
	require.LessOrEqual(t, len(names), 10+16, "10 suppliers and at most 16 overflow executors")
	require.Equal(t, len(names)*metrics.SeriesPerSupplier, countSeries(t, reg))
	var overflowed uint64
	for _, n := range names {
		if strings.HasPrefix(n, "(overflow ") {
			ov, found := g.Lookup(n)
			require.True(t, found)
			overflowed += ov.Stats().Successes
		}
	}
	require.Equal(t, uint64(990), overflowed, "the other names' calls ran on the overflow executors")
}
