package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
)

// TestShedReasonsAreComplete checks that shedReasons names every
// shed.Reason once, in order: a reason added to package shed must be
// added here too.
func TestShedReasonsAreComplete(t *testing.T) {
	require.Len(t, shedReasons, int(shed.Reasons)-1)
	for i, r := range shedReasons {
		assert.Equal(t, shed.Reason(i+1), r, "shedReasons[%d]", i)
	}
}

// shedStats is a shedder's snapshot with every field set apart.
func shedStats(shadow bool) shed.Stats {
	st := shed.Stats{
		Admitted: 1000, InFlight: 7, Delay: 25 * time.Millisecond, DropRate: 0.25,
		Capacity: 450.5, Limit: 45, Overload: true, Shadow: shadow, Tenants: 12, Panics: 2,
	}
	st.Shed[priority.Sheddable], st.Shed[priority.Default], st.Shed[priority.Critical] = 300, 20, 1
	st.ByReason[shed.Queue], st.ByReason[shed.Limit], st.ByReason[shed.Tenant] = 280, 30, 11
	return st
}

const shedGauges = `
# HELP fusebox_shed_callback_panics_total Panics of the shedder's OnShed callback, recovered.
# TYPE fusebox_shed_callback_panics_total counter
fusebox_shed_callback_panics_total{shedder="api"} 2
# HELP fusebox_shed_capacity_per_second Requests per second the service completes, as the shedder estimates it: the most of one of its last 10 intervals.
# TYPE fusebox_shed_capacity_per_second gauge
fusebox_shed_capacity_per_second{shedder="api"} 450.5
# HELP fusebox_shed_delay_seconds Queueing delay per request the CPU's backlog added in the last interval.
# TYPE fusebox_shed_delay_seconds gauge
fusebox_shed_delay_seconds{shedder="api"} 0.025
# HELP fusebox_shed_drop_rate Share of the arrivals the shedder refuses, in [0, 1].
# TYPE fusebox_shed_drop_rate gauge
fusebox_shed_drop_rate{shedder="api"} 0.25
# HELP fusebox_shed_in_flight Admitted requests not done yet.
# TYPE fusebox_shed_in_flight gauge
fusebox_shed_in_flight{shedder="api"} 7
# HELP fusebox_shed_in_flight_limit The in-flight limit of an overload while requests pile up; 0 when there is none.
# TYPE fusebox_shed_in_flight_limit gauge
fusebox_shed_in_flight_limit{shedder="api"} 45
# HELP fusebox_shed_overload 1 during an overload (the run queue's delay per request above the target), 0 outside one.
# TYPE fusebox_shed_overload gauge
fusebox_shed_overload{shedder="api"} 1
# HELP fusebox_shed_tenants Tenant keys the shedder tracks now (bounded by shed.Config.Tenants).
# TYPE fusebox_shed_tenants gauge
fusebox_shed_tenants{shedder="api"} 12
# HELP fusebox_shed_admitted_total Requests the shedder admitted (in shadow mode: those it would have admitted).
# TYPE fusebox_shed_admitted_total counter
fusebox_shed_admitted_total{shedder="api"} 1000
`

// counts is the exposition of the refusal counters: the figures of
// shedStats under the families whose names start with real ("refused" or
// "shadowed"), zeros under the others.
func counts(real string) string {
	var b strings.Builder
	for _, f := range []struct{ name, by, help string }{
		{"refused_total", "priority", "Requests the shedder refused, by the priority they carried: critical, default or sheddable."},
		{"refused_by_reason_total", "reason", "Requests the shedder refused, by reason: queue (the run queue's delay), limit (in-flight limit), tenant (over its fair share)."},
		{"shadowed_total", "priority", "Requests shadow mode served although the shedder would have refused them, by priority."},
		{"shadowed_by_reason_total", "reason", "Requests shadow mode served although the shedder would have refused them, by reason: queue, limit, tenant."},
	} {
		b.WriteString("# HELP fusebox_shed_" + f.name + " " + f.help + "\n# TYPE fusebox_shed_" + f.name + " counter\n")
		values := map[string]string{"critical": "1", "default": "20", "sheddable": "300", "limit": "30", "queue": "280", "tenant": "11"}
		labels := []string{"critical", "default", "sheddable"}
		if f.by == "reason" {
			labels = []string{"limit", "queue", "tenant"}
		}
		for _, l := range labels {
			v := values[l]
			if !strings.HasPrefix(f.name, real) {
				v = "0"
			}
			b.WriteString("fusebox_shed_" + f.name + "{" + f.by + "=\"" + l + "\",shedder=\"api\"} " + v + "\n")
		}
	}
	return b.String()
}

func TestShedCollectorReportsEveryFigureOfStats(t *testing.T) {
	t.Run("an enforcing shedder's refusals are refused_total, shadowed_total stays 0", func(t *testing.T) {
		c := newShedCollector("api", func() shed.Stats { return shedStats(false) }, Opts{})
		want := shedGauges + "# HELP fusebox_shed_shadow 1 while the shedder runs in shadow mode (it decides and reports, but admits every request), 0 while it enforces.\n# TYPE fusebox_shed_shadow gauge\nfusebox_shed_shadow{shedder=\"api\"} 0\n" + counts("refused")
		require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
		assert.Equal(t, SeriesPerShedder, testutil.CollectAndCount(c))
	})
	t.Run("in shadow mode the would-be refusals are shadowed_total, refused_total stays 0", func(t *testing.T) {
		c := newShedCollector("api", func() shed.Stats { return shedStats(true) }, Opts{})
		want := shedGauges + "# HELP fusebox_shed_shadow 1 while the shedder runs in shadow mode (it decides and reports, but admits every request), 0 while it enforces.\n# TYPE fusebox_shed_shadow gauge\nfusebox_shed_shadow{shedder=\"api\"} 1\n" + counts("shadowed")
		require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
	})
	t.Run("the names pass the Prometheus linter", func(t *testing.T) {
		problems, err := testutil.CollectAndLint(newShedCollector("api", func() shed.Stats { return shedStats(false) }, Opts{}))
		require.NoError(t, err)
		assert.Empty(t, problems)
	})
}
