package metrics_test

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/metrics"
	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
)

// overload drives s into a real overload until it sheds (or would, in
// shadow mode) a sheddable request, within 10 s: goroutines spin on
// every CPU, so that the scheduler's run queue, which the shedder reads,
// holds a backlog, while sheddable requests arrive and never complete
// (the capacity stays 0). It returns the tickets to finish. The signal
// is the real scheduler's, so this runs in real time, not in a bubble.
func overload(t *testing.T, s *shed.Shedder) []shed.Ticket {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < 10000; i++ {
					_ = i * i
				}
			}
		})
	}
	defer wg.Wait()
	defer close(stop)
	var held []shed.Ticket
	shadow := s.Stats().Shadow
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		tk, err := s.Allow(priority.Sheddable, "")
		if err != nil {
			require.True(t, errors.Is(err, shed.ErrShed), "%v", err)
			return held
		}
		held = append(held, tk)
		if shadow && s.Stats().Shed[priority.Sheddable] > 0 {
			return held
		}
	}
	t.Fatalf("no request shed in 10 s of overload: %+v", s.Stats())
	return nil
}

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

// A target of 1 µs and 10 ms intervals: any backlog of the run queue is
// an overload, at once.
var eager = shed.Config{Target: time.Microsecond, Interval: 10 * time.Millisecond}

func TestShedCollectorSeesRequestsShed(t *testing.T) {
	s := newShedder(t, eager)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewShedCollector("api", s, metrics.Opts{}))
	require.Equal(t, metrics.SeriesPerShedder, countSeries(t, reg), "every series from the start")
	assert.Zero(t, value(t, reg, "fusebox_shed_refused_total", "priority", "sheddable"))

	tk, err := s.Allow(priority.Default, "")
	require.NoError(t, err)
	assert.Equal(t, 1.0, value(t, reg, "fusebox_shed_admitted_total", "shedder", "api"))
	assert.Equal(t, 1.0, value(t, reg, "fusebox_shed_in_flight"))
	tk.Done()
	assert.Zero(t, value(t, reg, "fusebox_shed_in_flight"))

	held := overload(t, s)
	st := s.Stats()
	refused := value(t, reg, "fusebox_shed_refused_total", "priority", "sheddable")
	assert.GreaterOrEqual(t, refused, 1.0, "the refusal shows")
	assert.Equal(t, float64(st.Shed[priority.Sheddable]), refused)
	byReason := 0.0
	for _, r := range []string{"queue", "limit", "tenant"} {
		byReason += value(t, reg, "fusebox_shed_refused_by_reason_total", "reason", r)
	}
	assert.Equal(t, refused, byReason, "each refusal has one reason")
	assert.Equal(t, float64(len(held)+1), value(t, reg, "fusebox_shed_admitted_total"))
	assert.Equal(t, float64(len(held)), value(t, reg, "fusebox_shed_in_flight"))
	assert.Zero(t, value(t, reg, "fusebox_shed_shadowed_total", "priority", "sheddable"), "enforcing: nothing shadowed")
	for _, tk := range held {
		tk.Done()
	}
	assert.Zero(t, value(t, reg, "fusebox_shed_in_flight"))
}

func TestShedCollectorSeesShadowModesWouldBeRefusals(t *testing.T) {
	cfg := eager
	cfg.Shadow = true
	s := newShedder(t, cfg)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewShedCollector("api", s, metrics.Opts{}))
	assert.Equal(t, 1.0, value(t, reg, "fusebox_shed_shadow"))

	held := overload(t, s)
	defer func() {
		for _, tk := range held {
			tk.Done()
		}
	}()
	assert.GreaterOrEqual(t, value(t, reg, "fusebox_shed_shadowed_total", "priority", "sheddable"), 1.0)
	assert.Zero(t, value(t, reg, "fusebox_shed_refused_total", "priority", "sheddable"), "shadow mode refuses nothing")
	assert.Equal(t, float64(len(held)), value(t, reg, "fusebox_shed_in_flight"), "every request served")
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
