package fuseotel_test

import (
	"context"
	"testing"
	"testing/synctest"
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

func TestDurationProducer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, err := executor.NewGroup(executor.GroupConfig{
			Default:   executor.Config{InvocationTimeout: time.Second, Breaker: breaker.Config{ConsecutiveFailures: -1, ResetTimeout: time.Minute}},
			Suppliers: map[string]executor.Config{"search": {}},
		})
		require.NoError(t, err)
		defer g.Close(context.Background())
		reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(fuseotel.NewDurationProducer(g,
			fuseotel.Opts{Attributes: []attribute.KeyValue{attribute.String("group", "shop")}})))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		defer mp.Shutdown(context.Background())

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

		var rm metricdata.ResourceMetrics
		require.NoError(t, reader.Collect(context.Background(), &rm))
		var hist *metricdata.Histogram[float64]
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name == "fusebox.call.duration" {
					assert.Equal(t, "s", m.Unit)
					h := m.Data.(metricdata.Histogram[float64])
					hist = &h
				}
			}
		}
		require.NotNil(t, hist)
		assert.Equal(t, metricdata.CumulativeTemporality, hist.Temporality)
		assert.Len(t, hist.DataPoints, 2*fuseotel.DurationPointsPerSupplier, "payments and the configured search")
		byKey := map[string]metricdata.HistogramDataPoint[float64]{}
		for _, dp := range hist.DataPoints {
			s, _ := dp.Attributes.Value("supplier")
			o, _ := dp.Attributes.Value("outcome")
			grp, _ := dp.Attributes.Value("group")
			assert.Equal(t, "shop", grp.AsString())
			byKey[s.AsString()+"/"+o.AsString()] = dp
		}
		//                        5ms 10 25 50 100 250 500 1s 2.5 5 10 +Inf
		want := map[string][]uint64{
			"payments/success": {0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0},
			"payments/failure": {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0},
			"payments/ignored": make([]uint64, 12),
			"search/success":   make([]uint64, 12),
		}
		for k, counts := range want {
			require.Contains(t, byKey, k)
			assert.Equal(t, counts, byKey[k].BucketCounts, k)
			assert.Len(t, byKey[k].Bounds, len(executor.DurationBuckets))
		}
		assert.Equal(t, uint64(2), byKey["payments/failure"].Count)
		assert.InDelta(t, 1.04, byKey["payments/failure"].Sum, 1e-9)
		assert.InDelta(t, 0.32, byKey["payments/success"].Sum, 1e-9)
	})
}

// An executor the group evicts and makes again starts its histograms from
// 0: its points get a new start time, so that a consumer sees a reset and
// not a cumulative count that went backwards. A supplier that stays keeps
// its start time.
func TestDurationProducerStartsAgainWithAnExecutorMadeAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := executor.GroupConfig{Strict: true, Suppliers: map[string]executor.Config{"a": {}, "b": {}}}
		g, err := executor.NewGroup(cfg)
		require.NoError(t, err)
		defer g.Close(context.Background())
		p := fuseotel.NewDurationProducer(g, fuseotel.Opts{})
		ok := func(context.Context) (int, error) { return 1, nil }
		for _, name := range []string{"a", "b"} {
			_, err = executor.DoIn(context.Background(), g, name, ok)
			require.NoError(t, err)
		}
		type point struct {
			count uint64
			start time.Time
		}
		read := func() map[string]point {
			sms, err := p.Produce(context.Background())
			require.NoError(t, err)
			got := map[string]point{}
			for _, dp := range sms[0].Metrics[0].Data.(metricdata.Histogram[float64]).DataPoints {
				if o, _ := dp.Attributes.Value("outcome"); o.AsString() == "success" {
					s, _ := dp.Attributes.Value("supplier")
					got[s.AsString()] = point{dp.Count, dp.StartTime}
				}
			}
			return got
		}
		made := time.Now()
		first := read()
		require.Equal(t, uint64(1), first["a"].count)
		assert.Equal(t, made, first["a"].start, "there at the producer's creation: its points start then")

		time.Sleep(time.Minute)
		second := read() // the last collection before "a" is made again
		time.Sleep(time.Minute)
		require.NoError(t, g.Reconfigure(executor.GroupConfig{Strict: true, Suppliers: map[string]executor.Config{"b": {}}}))
		require.NoError(t, g.Reconfigure(cfg))
		third := read()
		assert.Equal(t, uint64(0), third["a"].count, "a new executor counts from 0")
		assert.True(t, third["a"].start.After(first["a"].start), "and its points start again: %v, then %v", first["a"].start, third["a"].start)
		assert.Equal(t, made.Add(time.Minute), third["a"].start, "at the last collection that did not see it")
		assert.Equal(t, second["b"], third["b"], "b stays as it was")
		assert.Equal(t, first["b"].start, third["b"].start)
	})
}
