package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/metrics"
	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
)

// value returns the value of the series of name with the labels kv
// (name, value, ...), failing if it is absent.
func value(t *testing.T, g prometheus.Gatherer, name string, kv ...string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for i := 0; i < len(kv); i += 2 {
				if labels[kv[i]] != kv[i+1] {
					continue next
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no series %s%v", name, kv)
	return 0
}

func newShedder(t *testing.T, cfg shed.Config) *shed.Shedder {
	t.Helper()
	s, err := shed.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// A real shedder's admissions show at once; what it refuses, by priority
// and reason, and shadow mode's would-be refusals are mapped by
// TestShedCollectorReportsEveryFigureOfStats (an overload needs the real
// scheduler, so the shed package's own tests make one).
func TestShedCollectorReadsARealShedder(t *testing.T) {
	s := newShedder(t, shed.Config{})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewShedCollector("api", s, metrics.Opts{}))
	require.Equal(t, metrics.SeriesPerShedder, countSeries(t, reg), "every series from the start")
	assert.Zero(t, value(t, reg, "fusebox_shed_refused_total", "priority", "sheddable"))
	assert.Zero(t, value(t, reg, "fusebox_shed_shadow"))

	tk, err := s.Allow(priority.Default, "")
	require.NoError(t, err)
	assert.Equal(t, 1.0, value(t, reg, "fusebox_shed_admitted_total", "shedder", "api"))
	assert.Equal(t, 1.0, value(t, reg, "fusebox_shed_in_flight"))
	tk.Done()
	assert.Zero(t, value(t, reg, "fusebox_shed_in_flight"))
}

func TestShedCollectorSaysShadowMode(t *testing.T) {
	s := newShedder(t, shed.Config{Shadow: true})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewShedCollector("api", s, metrics.Opts{}))
	assert.Equal(t, 1.0, value(t, reg, "fusebox_shed_shadow"))
}

func TestShedCollectorsOfTwoShedders(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	a, b := newShedder(t, shed.Config{}), newShedder(t, shed.Config{})
	reg.MustRegister(metrics.NewShedCollector("public", a, metrics.Opts{}))
	reg.MustRegister(metrics.NewShedCollector("admin", b, metrics.Opts{}))
	tk, err := b.Allow(priority.Default, "tenant-with-a-secret-name")
	require.NoError(t, err)
	defer tk.Done()
	assert.Zero(t, value(t, reg, "fusebox_shed_in_flight", "shedder", "public"))
	assert.Equal(t, 1.0, value(t, reg, "fusebox_shed_in_flight", "shedder", "admin"))
	assert.Equal(t, 2*metrics.SeriesPerShedder, countSeries(t, reg))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				assert.NotContains(t, l.GetValue(), "secret", "a tenant key is never a label")
			}
		}
	}
}

func TestShedCollectorRefusesBadArguments(t *testing.T) {
	s := newShedder(t, shed.Config{})
	for _, c := range []struct {
		name string
		c    *metrics.ShedCollector
		want string
	}{
		{"a nil shedder", metrics.NewShedCollector("api", nil, metrics.Opts{}), "nil *shed.Shedder"},
		{"an empty name", metrics.NewShedCollector("", s, metrics.Opts{}), "empty name"},
		{"a name that is not UTF-8", metrics.NewShedCollector("a\xff", s, metrics.Opts{}), "not valid UTF-8"},
		{"a constant label shedder", metrics.NewShedCollector("api", s, metrics.Opts{ConstLabels: prometheus.Labels{"shedder": "x"}}), `"shedder"`},
		{"a zero collector", &metrics.ShedCollector{}, "make it with metrics.NewShedCollector"},
	} {
		t.Run(c.name+" is refused at registration and at a scrape", func(t *testing.T) {
			err := prometheus.NewRegistry().Register(c.c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			_, err = testutil.CollectAndLint(c.c)
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), c.want), "%v", err)
		})
	}
}
