package fuseotel

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
)

// TestShedReasonsAreComplete checks that shedReasons names every
// shed.Reason once, in order.
func TestShedReasonsAreComplete(t *testing.T) {
	require.Len(t, shedReasons, int(shed.Reasons)-1)
	for i, r := range shedReasons {
		assert.Equal(t, shed.Reason(i+1), r, "shedReasons[%d]", i)
	}
}

// shedPoints collects once and returns every point as "name attr=value
// ..." → value, with the attribute shedder left out.
func shedPoints(t *testing.T, r *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]float64{}
	key := func(name string, set attribute.Set) string {
		for _, kv := range set.ToSlice() {
			if kv.Key != "shedder" {
				name += " " + string(kv.Key) + "=" + kv.Value.Emit()
			}
		}
		return name
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					out[key(m.Name, dp.Attributes)] = float64(dp.Value)
				}
			case metricdata.Gauge[float64]:
				for _, dp := range d.DataPoints {
					out[key(m.Name, dp.Attributes)] = dp.Value
				}
			case metricdata.Sum[int64]:
				require.True(t, d.IsMonotonic, "%s: a counter", m.Name)
				for _, dp := range d.DataPoints {
					out[key(m.Name, dp.Attributes)] = float64(dp.Value)
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return out
}

func TestRegisterShedderObservesEveryFigureOfStats(t *testing.T) {
	st := shed.Stats{
		Admitted: 1000, InFlight: 7, Delay: 25 * time.Millisecond, DropRate: 0.25,
		Capacity: 450.5, Limit: 45, Overload: true, Tenants: 12, Panics: 2,
	}
	st.Shed[priority.Sheddable], st.Shed[priority.Default], st.Shed[priority.Critical] = 300, 20, 1
	st.ByReason[shed.Queue], st.ByReason[shed.Limit], st.ByReason[shed.Tenant] = 280, 30, 11
	gauges := map[string]float64{
		"fusebox.shed.admitted": 1000, "fusebox.shed.callback_panics": 2, "fusebox.shed.overload": 1,
		"fusebox.shed.in_flight": 7, "fusebox.shed.in_flight_limit": 45, "fusebox.shed.tenants": 12,
		"fusebox.shed.capacity": 450.5, "fusebox.shed.delay": 0.025, "fusebox.shed.drop_rate": 0.25,
	}
	refusals := func(family string) map[string]float64 {
		return map[string]float64{
			family + " priority=critical": 1, family + " priority=default": 20, family + " priority=sheddable": 300,
			family + "_by_reason reason=queue": 280, family + "_by_reason reason=limit": 30, family + "_by_reason reason=tenant": 11,
		}
	}
	zeros := func(m map[string]float64) map[string]float64 {
		z := map[string]float64{}
		for k := range m {
			z[k] = 0
		}
		return z
	}
	for _, shadow := range []bool{false, true} {
		real, other := "fusebox.shed.refused", "fusebox.shed.shadowed"
		if shadow {
			real, other = other, real
		}
		t.Run("shadow "+map[bool]string{false: "off: refusals are refused", true: "on: refusals are shadowed"}[shadow], func(t *testing.T) {
			st := st
			st.Shadow = shadow
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			defer mp.Shutdown(context.Background())
			_, err := registerShedder("api", func() shed.Stats { return st }, mp, Opts{})
			require.NoError(t, err)
			want := map[string]float64{"fusebox.shed.shadow": map[bool]float64{false: 0, true: 1}[shadow]}
			for _, m := range []map[string]float64{gauges, refusals(real), zeros(refusals(other))} {
				for k, v := range m {
					want[k] = v
				}
			}
			got := shedPoints(t, reader)
			assert.Equal(t, want, got)
			assert.Len(t, got, PointsPerShedder)
		})
	}
}
