package fuseotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseotel"
)

// setup returns a group, a reader that collects what the bridge observes,
// and the bridge's registration; everything is closed when the test ends.
func setup(t *testing.T, cfg executor.GroupConfig, opts fuseotel.Opts) (*executor.Group, *sdkmetric.ManualReader) {
	t.Helper()
	g, err := executor.NewGroup(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close(context.Background())) })
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { require.NoError(t, mp.Shutdown(context.Background())) })
	_, err = fuseotel.Register(g, mp, opts)
	require.NoError(t, err)
	return g, reader
}

// points is one collection: value by instrument name and attribute set.
type points map[string]map[attribute.Distinct]float64

func collect(t *testing.T, r *sdkmetric.ManualReader) points {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	p := points{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, fuseotel.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			vals := map[attribute.Distinct]float64{}
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					vals[dp.Attributes.Equivalent()] = float64(dp.Value)
				}
			case metricdata.Gauge[float64]:
				for _, dp := range d.DataPoints {
					vals[dp.Attributes.Equivalent()] = dp.Value
				}
			case metricdata.Sum[int64]:
				require.True(t, d.IsMonotonic, "%s: a counter must be monotonic", m.Name)
				require.Equal(t, metricdata.CumulativeTemporality, d.Temporality)
				for _, dp := range d.DataPoints {
					vals[dp.Attributes.Equivalent()] = float64(dp.Value)
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
			p[m.Name] = vals
		}
	}
	return p
}

// get returns the value of name for the attributes kv, failing if absent.
func (p points) get(t *testing.T, name string, kv ...attribute.KeyValue) float64 {
	t.Helper()
	vals, ok := p[name]
	require.True(t, ok, "no instrument %s", name)
	set := attribute.NewSet(kv...)
	v, ok := vals[set.Equivalent()]
	require.True(t, ok, "%s has no point for %v", name, kv)
	return v
}

func supplier(s string) attribute.KeyValue { return attribute.String("supplier", s) }

var errBoom = errors.New("boom")

func TestTheBridgeObservesEveryInstrumentOfEverySupplier(t *testing.T) {
	cfg := executor.GroupConfig{Default: executor.Config{
		Slots: 3, InvocationTimeout: time.Second,
		Breaker: breaker.Config{ConsecutiveFailures: 2, ResetTimeout: time.Minute},
	}}
	g, reader := setup(t, cfg, fuseotel.Opts{})
	ctx := context.Background()
	ok := func(context.Context) (int, error) { return 1, nil }
	fail := func(context.Context) (int, error) { return 0, errBoom }

	for range 3 {
		_, err := executor.DoIn(ctx, g, "catalog", ok)
		require.NoError(t, err)
	}
	for range 2 {
		_, err := executor.DoIn(ctx, g, "payments", fail)
		require.ErrorIs(t, err, errBoom)
	}
	_, err := executor.DoIn(ctx, g, "payments", ok)
	require.ErrorIs(t, err, breaker.ErrOpen)

	p := collect(t, reader)
	cat, pay := supplier("catalog"), supplier("payments")
	assert.Equal(t, 3.0, p.get(t, "fusebox.calls", cat, attribute.String("outcome", "success")))
	assert.Equal(t, 0.0, p.get(t, "fusebox.calls", cat, attribute.String("outcome", "failure")))
	assert.Equal(t, 2.0, p.get(t, "fusebox.calls", pay, attribute.String("outcome", "failure")))
	assert.Equal(t, 1.0, p.get(t, "fusebox.rejections", pay, attribute.String("reason", "open")))
	assert.Equal(t, 0.0, p.get(t, "fusebox.rejections", pay, attribute.String("reason", "queue_full")))
	assert.Equal(t, 1.0, p.get(t, "fusebox.breaker.state", pay, attribute.String("state", "open")))
	assert.Equal(t, 0.0, p.get(t, "fusebox.breaker.state", pay, attribute.String("state", "half_open")))
	assert.Equal(t, 1.0, p.get(t, "fusebox.breaker.state", cat, attribute.String("state", "closed")))
	assert.Equal(t, 1.0, p.get(t, "fusebox.breaker.transitions", pay, attribute.String("reason", "consecutive_failures")))
	assert.Equal(t, 3.0, p.get(t, "fusebox.slots.free", cat))
	assert.Equal(t, 0.0, p.get(t, "fusebox.slots.in_use", cat))
	assert.Equal(t, 0.0, p.get(t, "fusebox.queue.capacity", cat))

	// Every supplier has the same fixed set of series, from its first call.
	n := 0
	for _, vals := range p {
		n += len(vals)
	}
	assert.Equal(t, 2*fuseotel.SeriesPerSupplier, n, "series of two suppliers")
	assert.Equal(t, 40, fuseotel.SeriesPerSupplier, "the number the docs give")
}

func TestTheRatesOfAWindowedBreaker(t *testing.T) {
	cfg := executor.GroupConfig{Default: executor.Config{
		Slots: 2, InvocationTimeout: time.Second,
		Breaker: breaker.Config{
			ConsecutiveFailures: -1, FailureRate: 0.9, MinimumCalls: 10, WindowSize: 20,
			ResetTimeout: time.Minute,
		},
	}}
	g, reader := setup(t, cfg, fuseotel.Opts{})
	ctx := context.Background()
	for i := range 8 {
		executor.DoIn(ctx, g, "search", func(context.Context) (int, error) {
			if i%4 == 0 {
				return 0, errBoom
			}
			return 1, nil
		})
	}
	p := collect(t, reader)
	s := supplier("search")
	assert.Equal(t, 8.0, p.get(t, "fusebox.breaker.window_calls", s))
	assert.Equal(t, 0.25, p.get(t, "fusebox.breaker.failure_rate", s))
	assert.Equal(t, 0.0, p.get(t, "fusebox.breaker.slow_call_rate", s))
}

func TestARunningCallHoldsASlot(t *testing.T) {
	g, reader := setup(t, executor.GroupConfig{Default: executor.Config{Slots: 2}}, fuseotel.Opts{})
	release := make(chan struct{})
	f, err := executor.SubmitIn(context.Background(), g, "slow", func(context.Context) (int, error) {
		<-release
		return 1, nil
	})
	require.NoError(t, err)
	// The slot is taken before Submit returns.
	p := collect(t, reader)
	assert.Equal(t, 1.0, p.get(t, "fusebox.slots.in_use", supplier("slow")))
	assert.Equal(t, 1.0, p.get(t, "fusebox.slots.free", supplier("slow")))
	close(release)
	_, err = f.Await(context.Background())
	require.NoError(t, err)
	p = collect(t, reader)
	assert.Equal(t, 0.0, p.get(t, "fusebox.slots.in_use", supplier("slow")))
}

func TestOpts(t *testing.T) {
	group := attribute.String("group", "http")
	g, reader := setup(t, executor.GroupConfig{}, fuseotel.Opts{Prefix: "shop", Attributes: []attribute.KeyValue{group}})
	_, err := executor.DoIn(context.Background(), g, "catalog", func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	p := collect(t, reader)
	assert.Equal(t, 1.0, p.get(t, "shop.calls", group, supplier("catalog"), attribute.String("outcome", "success")))
	assert.NotContains(t, p, "fusebox.calls")
}

func TestUnregisterStopsObserving(t *testing.T) {
	g, err := executor.NewGroup(executor.GroupConfig{})
	require.NoError(t, err)
	defer g.Close(context.Background())
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	reg, err := fuseotel.Register(g, mp, fuseotel.Opts{})
	require.NoError(t, err)
	_, err = g.Executor("catalog")
	require.NoError(t, err)
	require.NotEmpty(t, collect(t, reader)["fusebox.calls"])
	require.NoError(t, reg.Unregister())
	assert.Empty(t, collect(t, reader)["fusebox.calls"])
}

func TestBadArguments(t *testing.T) {
	g, err := executor.NewGroup(executor.GroupConfig{})
	require.NoError(t, err)
	defer g.Close(context.Background())
	_, err = fuseotel.Register(nil, sdkmetric.NewMeterProvider(), fuseotel.Opts{})
	require.ErrorContains(t, err, "nil *executor.Group")
	_, err = fuseotel.Register(g, nil, fuseotel.Opts{})
	require.ErrorContains(t, err, "nil metric.MeterProvider")
}
