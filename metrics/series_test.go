package metrics_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	assert.Equal(t, 2*metrics.SeriesPerSupplier, countSeries(t, reg), "series before any call")
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

func TestCallDurationHistogram(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: executor.Config{InvocationTimeout: time.Second,
			Breaker: breaker.Config{ConsecutiveFailures: -1, ResetTimeout: time.Minute}}})
		call := func(d time.Duration, err error) {
			executor.DoIn(t.Context(), g, "payments", func(context.Context) (int, error) {
				time.Sleep(d)
				return 1, err
			})
		}
		call(20*time.Millisecond, nil)
		call(300*time.Millisecond, nil)
		call(2*time.Second, nil) // times out at 1 s: a failure
		call(40*time.Millisecond, errBoom)
		time.Sleep(2 * time.Second)
		require.NoError(t, testutil.CollectAndCompare(metrics.NewCollector(g, metrics.Opts{}), strings.NewReader(`
# HELP fusebox_call_duration_seconds Durations of the calls that ran, from getting a slot to the function's return (or the deadline of a call that timed out), by outcome: success, failure or ignored.
# TYPE fusebox_call_duration_seconds histogram
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.005"} 0
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.01"} 0
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.025"} 0
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.05"} 1
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.1"} 1
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.25"} 1
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.5"} 1
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="1"} 2
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="2.5"} 2
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="5"} 2
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="10"} 2
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="+Inf"} 2
fusebox_call_duration_seconds_sum{outcome="failure",supplier="payments"} 1.04
fusebox_call_duration_seconds_count{outcome="failure",supplier="payments"} 2
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="payments",le="0.005"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="payments",le="0.01"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="payments",le="0.025"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="payments",le="0.05"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="payments",le="0.1"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="payments",le="0.25"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="payments",le="0.5"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="payments",le="1"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="payments",le="2.5"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="payments",le="5"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="payments",le="10"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="payments",le="+Inf"} 0
fusebox_call_duration_seconds_sum{outcome="ignored",supplier="payments"} 0
fusebox_call_duration_seconds_count{outcome="ignored",supplier="payments"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.005"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.01"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.025"} 1
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.05"} 1
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.1"} 1
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.25"} 1
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.5"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="1"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="2.5"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="5"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="10"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="+Inf"} 2
fusebox_call_duration_seconds_sum{outcome="success",supplier="payments"} 0.32
fusebox_call_duration_seconds_count{outcome="success",supplier="payments"} 2
`), "fusebox_call_duration_seconds"))
	})
}
