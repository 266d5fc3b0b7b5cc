package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
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
	"github.com/fusebox-go/fusebox/priority"
)

var errBoom = errors.New("boom")

func newGroup(t *testing.T, cfg executor.GroupConfig) *executor.Group {
	t.Helper()
	g, err := executor.NewGroup(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close(context.Background())) })
	return g
}

// countSeries counts the series g exposes: one per sample of a counter or
// gauge, and per histogram one per bucket, +Inf, _sum and _count.
func countSeries(t *testing.T, g prometheus.Gatherer) int {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	n := 0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				n += len(h.GetBucket()) + 3
				continue
			}
			n++
		}
	}
	return n
}

func executorOf(t *testing.T, g *executor.Group, name string) *executor.Executor {
	t.Helper()
	ex, err := g.Executor(name)
	require.NoError(t, err)
	return ex
}

func ok(context.Context) (int, error) { return 1, nil }

// reasons are the label values of fusebox_breaker_transitions_total, in
// the order they are exposed (alphabetical).
var reasons = []string{
	"consecutive_failures", "error_kind", "failure_rate", "manual", "probe_deferred", "probe_failed",
	"probes_succeeded", "queue_drained", "queue_full", "ready_to_trip", "remote", "reset_timeout", "saturation",
	"slow_call_rate",
}

// transitions is the expected exposition of the transition counters: 0 for
// every reason but those in nonzero.
func transitions(supplier string, nonzero map[string]int) string {
	var b strings.Builder
	for _, r := range reasons {
		fmt.Fprintf(&b, "fusebox_breaker_transitions_total{reason=%q,supplier=%q} %d\n", r, supplier, nonzero[r])
	}
	return b.String()
}

// One scenario drives two suppliers through every counter and gauge: each
// value in the exposition below is what happened.
func TestCollectorReportsWhatHappened(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{
			Default: executor.Config{Slots: 2, InvocationTimeout: time.Second, Breaker: breaker.Config{ConsecutiveFailures: 3}},
			Suppliers: map[string]executor.Config{
				"search": {Slots: 1, Queue: 2},
			},
		})
		c := metrics.NewCollector(g, metrics.Opts{})

		// payments: 2 successes, 1 cancelled by its caller, then a panic, a
		// timeout and an error (3 failures in a row: open), then a refusal.
		pay := executorOf(t, g, "payments")
		for range 2 {
			_, err := executor.Do(t.Context(), pay, ok)
			require.NoError(t, err)
		}
		// Cancelled before it could start, so that it never runs (a call
		// cancelled while its function runs would be in the duration
		// histogram, depending on which came first).
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		f, err := executor.Submit(ctx, pay, func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
		require.NoError(t, err)
		_, err = f.Await(t.Context())
		require.ErrorIs(t, err, context.Canceled)
		_, err = executor.Do(t.Context(), pay, func(context.Context) (int, error) { panic("bug") })
		require.Error(t, err)
		_, err = executor.Do(t.Context(), pay, func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
		require.ErrorIs(t, err, executor.ErrTimeout)
		_, err = executor.Do(t.Context(), pay, func(context.Context) (int, error) { return 0, errBoom })
		require.ErrorIs(t, err, errBoom)
		_, err = executor.Do(t.Context(), pay, ok)
		require.ErrorIs(t, err, breaker.ErrOpen)

		// search: one slot and a queue of 2. A call that ignores its
		// context holds the slot past its deadline (overdue); the call
		// queued behind it times out in the queue; two more fill the queue
		// and the next is refused: the breaker opens on a full queue.
		search := executorOf(t, g, "search")
		hold := make(chan struct{})
		var release sync.Once
		// Registered after the group's Close: runs before it, so a failed
		// assertion cannot leave Close waiting for the stubborn call.
		t.Cleanup(func() { release.Do(func() { close(hold) }) })
		stubborn := func(context.Context) (int, error) { <-hold; return 0, nil }
		first, err := executor.Submit(t.Context(), search, stubborn)
		require.NoError(t, err)
		queued, err := executor.Submit(t.Context(), search, ok)
		require.NoError(t, err)
		time.Sleep(time.Second)
		synctest.Wait()
		_, err = first.Await(t.Context())
		require.ErrorIs(t, err, executor.ErrTimeout)
		_, err = queued.Await(t.Context())
		require.ErrorIs(t, err, executor.ErrQueueTimeout)
		for range 2 {
			_, err = executor.Submit(t.Context(), search, ok)
			require.NoError(t, err)
		}
		_, err = executor.Submit(priority.With(t.Context(), priority.Sheddable), search, ok)
		require.ErrorIs(t, err, executor.ErrSaturated)

		require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP fusebox_breaker_state State of the supplier's circuit breaker: 1 for the current state, 0 for the others.
# TYPE fusebox_breaker_state gauge
fusebox_breaker_state{state="closed",supplier="payments"} 0
fusebox_breaker_state{state="disabled",supplier="payments"} 0
fusebox_breaker_state{state="forced_open",supplier="payments"} 0
fusebox_breaker_state{state="half_open",supplier="payments"} 0
fusebox_breaker_state{state="open",supplier="payments"} 1
fusebox_breaker_state{state="closed",supplier="search"} 0
fusebox_breaker_state{state="disabled",supplier="search"} 0
fusebox_breaker_state{state="forced_open",supplier="search"} 0
fusebox_breaker_state{state="half_open",supplier="search"} 0
fusebox_breaker_state{state="open",supplier="search"} 1
# HELP fusebox_breaker_failure_rate Failures per call in the breaker's sliding window, in [0, 1]; 0 while the window is empty or the breaker has no rate rule.
# TYPE fusebox_breaker_failure_rate gauge
fusebox_breaker_failure_rate{supplier="payments"} 0
fusebox_breaker_failure_rate{supplier="search"} 0
# HELP fusebox_breaker_slow_call_rate Slow calls per call in the breaker's sliding window, in [0, 1]; 0 while the window is empty or the breaker has no rate rule.
# TYPE fusebox_breaker_slow_call_rate gauge
fusebox_breaker_slow_call_rate{supplier="payments"} 0
fusebox_breaker_slow_call_rate{supplier="search"} 0
# HELP fusebox_breaker_window_calls Calls in the breaker's sliding window: the rates weigh something once it reaches the breaker's minimum number of calls.
# TYPE fusebox_breaker_window_calls gauge
fusebox_breaker_window_calls{supplier="payments"} 0
fusebox_breaker_window_calls{supplier="search"} 0
# HELP fusebox_calls_total Finished calls, by outcome as the breaker classified them: success, failure or ignored.
# TYPE fusebox_calls_total counter
fusebox_calls_total{outcome="failure",supplier="payments"} 3
fusebox_calls_total{outcome="ignored",supplier="payments"} 1
fusebox_calls_total{outcome="success",supplier="payments"} 2
fusebox_calls_total{outcome="failure",supplier="search"} 1
fusebox_calls_total{outcome="ignored",supplier="search"} 1
fusebox_calls_total{outcome="success",supplier="search"} 0
# HELP fusebox_call_timeouts_total Calls that outlived their invocation timeout (also counted as failures unless classified otherwise).
# TYPE fusebox_call_timeouts_total counter
fusebox_call_timeouts_total{supplier="payments"} 1
fusebox_call_timeouts_total{supplier="search"} 1
# HELP fusebox_call_panics_total Calls whose function panicked (also counted as failures unless classified otherwise).
# TYPE fusebox_call_panics_total counter
fusebox_call_panics_total{supplier="payments"} 1
fusebox_call_panics_total{supplier="search"} 0
# HELP fusebox_calls_cancelled_total Calls whose caller cancelled them (also counted as ignored).
# TYPE fusebox_calls_cancelled_total counter
fusebox_calls_cancelled_total{supplier="payments"} 1
fusebox_calls_cancelled_total{supplier="search"} 0
# HELP fusebox_queue_timeouts_total Calls that waited in the queue for the queue timeout without getting a slot, and never ran (also counted as ignored).
# TYPE fusebox_queue_timeouts_total counter
fusebox_queue_timeouts_total{supplier="payments"} 0
fusebox_queue_timeouts_total{supplier="search"} 1
# HELP fusebox_rejections_by_priority_total Calls refused without running, by the priority their context carried: critical, default or sheddable (see package priority).
# TYPE fusebox_rejections_by_priority_total counter
fusebox_rejections_by_priority_total{priority="critical",supplier="payments"} 0
fusebox_rejections_by_priority_total{priority="critical",supplier="search"} 0
fusebox_rejections_by_priority_total{priority="default",supplier="payments"} 1
fusebox_rejections_by_priority_total{priority="default",supplier="search"} 0
fusebox_rejections_by_priority_total{priority="sheddable",supplier="payments"} 0
fusebox_rejections_by_priority_total{priority="sheddable",supplier="search"} 1
# HELP fusebox_rejections_total Calls refused without running, by reason: open, saturated, queue_full, closed, busy (a full bulkhead of young calls: the breaker stayed closed).
# TYPE fusebox_rejections_total counter
fusebox_rejections_total{reason="busy",supplier="payments"} 0
fusebox_rejections_total{reason="closed",supplier="payments"} 0
fusebox_rejections_total{reason="open",supplier="payments"} 1
fusebox_rejections_total{reason="queue_full",supplier="payments"} 0
fusebox_rejections_total{reason="saturated",supplier="payments"} 0
fusebox_rejections_total{reason="throttled",supplier="payments"} 0
fusebox_rejections_total{reason="busy",supplier="search"} 0
fusebox_rejections_total{reason="closed",supplier="search"} 0
fusebox_rejections_total{reason="open",supplier="search"} 0
fusebox_rejections_total{reason="queue_full",supplier="search"} 1
fusebox_rejections_total{reason="saturated",supplier="search"} 0
fusebox_rejections_total{reason="throttled",supplier="search"} 0
# HELP fusebox_shadow 1 while the supplier runs in shadow mode (every rule evaluated, nothing refused), 0 while it enforces.
# TYPE fusebox_shadow gauge
fusebox_shadow{supplier="payments"} 0
fusebox_shadow{supplier="search"} 0
# HELP fusebox_shadowed_total Calls that shadow mode ran although enforce mode would have refused them, by reason: open, saturated, queue_full, busy.
# TYPE fusebox_shadowed_total counter
fusebox_shadowed_total{reason="busy",supplier="payments"} 0
fusebox_shadowed_total{reason="open",supplier="payments"} 0
fusebox_shadowed_total{reason="queue_full",supplier="payments"} 0
fusebox_shadowed_total{reason="saturated",supplier="payments"} 0
fusebox_shadowed_total{reason="throttled",supplier="payments"} 0
fusebox_shadowed_total{reason="busy",supplier="search"} 0
fusebox_shadowed_total{reason="open",supplier="search"} 0
fusebox_shadowed_total{reason="queue_full",supplier="search"} 0
fusebox_shadowed_total{reason="saturated",supplier="search"} 0
fusebox_shadowed_total{reason="throttled",supplier="search"} 0
# HELP fusebox_slots_in_use Bulkhead slots held by running calls, overdue calls included.
# TYPE fusebox_slots_in_use gauge
fusebox_slots_in_use{supplier="payments"} 0
fusebox_slots_in_use{supplier="search"} 1
# HELP fusebox_slots_free Free bulkhead slots.
# TYPE fusebox_slots_free gauge
fusebox_slots_free{supplier="payments"} 2
fusebox_slots_free{supplier="search"} 0
# HELP fusebox_slots_limit The bulkhead's slots: executor.Config.Slots, or with executor.Config.Adaptive the limit in force.
# TYPE fusebox_slots_limit gauge
fusebox_slots_limit{supplier="payments"} 2
fusebox_slots_limit{supplier="search"} 1
# HELP fusebox_limit_baseline_seconds The latency the adaptive limit judges by: the lowest mean of recent windows (0 with a fixed bulkhead).
# TYPE fusebox_limit_baseline_seconds gauge
fusebox_limit_baseline_seconds{supplier="payments"} 0
fusebox_limit_baseline_seconds{supplier="search"} 0
# HELP fusebox_limit_gradient The adaptive limit's last gradient, 1.5 × baseline / window mean latency in [0.5, 1]: below 1 the limit was cut by it (1 with a fixed bulkhead).
# TYPE fusebox_limit_gradient gauge
fusebox_limit_gradient{supplier="payments"} 1
fusebox_limit_gradient{supplier="search"} 1
# HELP fusebox_queue_length Calls waiting in the queue for a slot.
# TYPE fusebox_queue_length gauge
fusebox_queue_length{supplier="payments"} 0
fusebox_queue_length{supplier="search"} 2
# HELP fusebox_queue_capacity Size of the queue (0 when the supplier has none).
# TYPE fusebox_queue_capacity gauge
fusebox_queue_capacity{supplier="payments"} 0
fusebox_queue_capacity{supplier="search"} 2
# HELP fusebox_calls_overdue Calls past their deadline whose function has not returned yet; each still holds a slot.
# TYPE fusebox_calls_overdue gauge
fusebox_calls_overdue{supplier="payments"} 0
fusebox_calls_overdue{supplier="search"} 1
# HELP fusebox_call_duration_seconds Durations of the calls that ran, from getting a slot to the function's return (or the deadline of a call that timed out), by outcome: success, failure or ignored.
# TYPE fusebox_call_duration_seconds histogram
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.005"} 2
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.01"} 2
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.025"} 2
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.05"} 2
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.1"} 2
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.25"} 2
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="0.5"} 2
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="1"} 3
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="2.5"} 3
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="5"} 3
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="10"} 3
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="payments",le="+Inf"} 3
fusebox_call_duration_seconds_sum{outcome="failure",supplier="payments"} 1
fusebox_call_duration_seconds_count{outcome="failure",supplier="payments"} 3
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="search",le="0.005"} 0
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="search",le="0.01"} 0
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="search",le="0.025"} 0
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="search",le="0.05"} 0
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="search",le="0.1"} 0
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="search",le="0.25"} 0
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="search",le="0.5"} 0
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="search",le="1"} 1
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="search",le="2.5"} 1
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="search",le="5"} 1
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="search",le="10"} 1
fusebox_call_duration_seconds_bucket{outcome="failure",supplier="search",le="+Inf"} 1
fusebox_call_duration_seconds_sum{outcome="failure",supplier="search"} 1
fusebox_call_duration_seconds_count{outcome="failure",supplier="search"} 1
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
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="search",le="0.005"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="search",le="0.01"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="search",le="0.025"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="search",le="0.05"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="search",le="0.1"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="search",le="0.25"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="search",le="0.5"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="search",le="1"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="search",le="2.5"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="search",le="5"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="search",le="10"} 0
fusebox_call_duration_seconds_bucket{outcome="ignored",supplier="search",le="+Inf"} 0
fusebox_call_duration_seconds_sum{outcome="ignored",supplier="search"} 0
fusebox_call_duration_seconds_count{outcome="ignored",supplier="search"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.005"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.01"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.025"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.05"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.1"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.25"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="0.5"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="1"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="2.5"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="5"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="10"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="payments",le="+Inf"} 2
fusebox_call_duration_seconds_sum{outcome="success",supplier="payments"} 0
fusebox_call_duration_seconds_count{outcome="success",supplier="payments"} 2
fusebox_call_duration_seconds_bucket{outcome="success",supplier="search",le="0.005"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="search",le="0.01"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="search",le="0.025"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="search",le="0.05"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="search",le="0.1"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="search",le="0.25"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="search",le="0.5"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="search",le="1"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="search",le="2.5"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="search",le="5"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="search",le="10"} 0
fusebox_call_duration_seconds_bucket{outcome="success",supplier="search",le="+Inf"} 0
fusebox_call_duration_seconds_sum{outcome="success",supplier="search"} 0
fusebox_call_duration_seconds_count{outcome="success",supplier="search"} 0
# HELP fusebox_breaker_transitions_total Transitions of the supplier's circuit breaker, by the reason they had.
# TYPE fusebox_breaker_transitions_total counter
`+transitions("payments", map[string]int{"consecutive_failures": 1})+
			transitions("search", map[string]int{"queue_full": 1}))))

		// The stubborn call returns: its slot goes to the queue.
		release.Do(func() { close(hold) })
		synctest.Wait()
		require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP fusebox_calls_overdue Calls past their deadline whose function has not returned yet; each still holds a slot.
# TYPE fusebox_calls_overdue gauge
fusebox_calls_overdue{supplier="payments"} 0
fusebox_calls_overdue{supplier="search"} 0
# HELP fusebox_queue_length Calls waiting in the queue for a slot.
# TYPE fusebox_queue_length gauge
fusebox_queue_length{supplier="payments"} 0
fusebox_queue_length{supplier="search"} 0
`), "fusebox_calls_overdue", "fusebox_queue_length"))
	})
}

func TestCollectorIsWellFormed(t *testing.T) {
	t.Run("its metrics pass the Prometheus linter", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		_, err := executor.Do(t.Context(), executorOf(t, g, "payments"), ok)
		require.NoError(t, err)
		problems, err := testutil.CollectAndLint(metrics.NewCollector(g, metrics.Opts{}))
		require.NoError(t, err)
		assert.Empty(t, problems)
	})

	t.Run("it registers on a pedantic registry, which checks every metric against Describe", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		for _, name := range []string{"a", "b"} {
			_, err := executor.Do(t.Context(), executorOf(t, g, name), ok)
			require.NoError(t, err)
		}
		reg := prometheus.NewPedanticRegistry()
		require.NoError(t, reg.Register(metrics.NewCollector(g, metrics.Opts{})))
		assert.Equal(t, 2*metrics.SeriesPerSupplier, countSeries(t, reg))
		assert.Equal(t, 94, metrics.SeriesPerSupplier, "the number the docs give")
	})

	t.Run("an empty group reports nothing", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		assert.Zero(t, testutil.CollectAndCount(metrics.NewCollector(g, metrics.Opts{})))
	})

	t.Run("two groups told apart by a constant label share one registry", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		for _, name := range []string{"http", "db"} {
			g := newGroup(t, executor.GroupConfig{})
			_, err := executor.Do(t.Context(), executorOf(t, g, "primary"), ok)
			require.NoError(t, err)
			require.NoError(t, reg.Register(metrics.NewCollector(g, metrics.Opts{ConstLabels: prometheus.Labels{"group": name}})))
		}
		require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP fusebox_calls_total Finished calls, by outcome as the breaker classified them: success, failure or ignored.
# TYPE fusebox_calls_total counter
fusebox_calls_total{group="db",outcome="failure",supplier="primary"} 0
fusebox_calls_total{group="db",outcome="ignored",supplier="primary"} 0
fusebox_calls_total{group="db",outcome="success",supplier="primary"} 1
fusebox_calls_total{group="http",outcome="failure",supplier="primary"} 0
fusebox_calls_total{group="http",outcome="ignored",supplier="primary"} 0
fusebox_calls_total{group="http",outcome="success",supplier="primary"} 1
`), "fusebox_calls_total"))
	})

	t.Run("a namespace replaces fusebox", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		_, err := executor.Do(t.Context(), executorOf(t, g, "a"), ok)
		require.NoError(t, err)
		c := metrics.NewCollector(g, metrics.Opts{Namespace: "shop"})
		assert.Equal(t, 3, testutil.CollectAndCount(c, "shop_calls_total"))
		assert.Zero(t, testutil.CollectAndCount(c, "fusebox_calls_total"))
	})
}

// unchecked hides a collector's descriptors, as a collector that
// describes nothing does: the registry then takes it unchecked, and only a
// scrape reaches its Collect.
type unchecked struct{ prometheus.Collector }

func (unchecked) Describe(chan<- *prometheus.Desc) {}

// A collector that cannot report anything is refused by Register and by
// every scrape, naming the mistake. Before, Register took a collector of a
// nil group, and the first scrape panicked on a goroutine of
// Registry.Gather, crashing the process.
func TestCollectorsThatCannotReportAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    prometheus.Collector
		want string
	}{
		{"a nil group", metrics.NewCollector(nil, metrics.Opts{}), "NewCollector with a nil *executor.Group"},
		{"a zero Collector", &metrics.Collector{}, "zero *Collector (make it with metrics.NewCollector)"},
		{"a zero PolicyCollector", &metrics.PolicyCollector{}, "zero *PolicyCollector (make it with metrics.NewPolicyCollector)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorContains(t, prometheus.NewPedanticRegistry().Register(tc.c), tc.want)
			reg := prometheus.NewRegistry()
			require.NoError(t, reg.Register(unchecked{tc.c}))
			_, err := reg.Gather()
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
