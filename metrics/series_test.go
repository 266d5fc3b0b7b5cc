package metrics_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/metrics"
)

func TestConfiguredSuppliersHaveSeriesFromStartup(t *testing.T) {
	g := newGroup(t, executor.GroupConfig{Suppliers: map[string]executor.Config{"payments": {Slots: 4}, "search": {}}})
	c := metrics.NewCollector(g, metrics.Opts{})
	assert.Equal(t, 2*metrics.SeriesPerSupplier, testutil.CollectAndCount(c), "series before any call")
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP fusebox_slots_free Free bulkhead slots.
# TYPE fusebox_slots_free gauge
fusebox_slots_free{supplier="payments"} 4
fusebox_slots_free{supplier="search"} 10
`), "fusebox_slots_free"))
}

func TestTheRatesOfAWindowedBreaker(t *testing.T) {
	g := newGroup(t, executor.GroupConfig{Default: executor.Config{
		InvocationTimeout: time.Second,
		Breaker: breaker.Config{
			ConsecutiveFailures: -1, FailureRate: 0.9, MinimumCalls: 10, WindowSize: 20,
			SlowCallRate: 0.9, SlowCallDuration: time.Hour, ResetTimeout: time.Minute,
		},
	}})
	for i := range 8 {
		executor.DoIn(context.Background(), g, "search", func(context.Context) (int, error) {
			if i%4 == 0 {
				return 0, errBoom
			}
			return 1, nil
		})
	}
	require.NoError(t, testutil.CollectAndCompare(metrics.NewCollector(g, metrics.Opts{}), strings.NewReader(`
# HELP fusebox_breaker_failure_rate Failures per call in the breaker's sliding window, in [0, 1]; 0 while the window is empty or the breaker has no rate rule.
# TYPE fusebox_breaker_failure_rate gauge
fusebox_breaker_failure_rate{supplier="search"} 0.25
# HELP fusebox_breaker_slow_call_rate Slow calls per call in the breaker's sliding window, in [0, 1]; 0 while the window is empty or the breaker has no rate rule.
# TYPE fusebox_breaker_slow_call_rate gauge
fusebox_breaker_slow_call_rate{supplier="search"} 0
# HELP fusebox_breaker_window_calls Calls in the breaker's sliding window: the rates weigh something once it reaches the breaker's minimum number of calls.
# TYPE fusebox_breaker_window_calls gauge
fusebox_breaker_window_calls{supplier="search"} 8
`), "fusebox_breaker_failure_rate", "fusebox_breaker_slow_call_rate", "fusebox_breaker_window_calls"))
}
