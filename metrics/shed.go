package metrics

import (
	"errors"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
)

// shedReasons are the label values of the reason label, in shed.Reason
// order (TestShedReasonsAreComplete checks the list).
var shedReasons = [...]shed.Reason{shed.Queue, shed.Limit, shed.Tenant}

// SeriesPerShedder is the number of series a ShedCollector reports: 3
// priorities and 3 reasons for refusals, the same for shadow mode's, and
// 10 metrics without a second label. It does not depend on the traffic.
const SeriesPerShedder = 2*(priority.Levels+len(shedReasons)) + 10

// ShedCollector is a prometheus.Collector for one inbound shedder
// (package shed): at each scrape it reads Shedder.Stats and reports its
// series under the constant label shedder. It keeps no state and starts
// nothing; it is safe for concurrent use.
type ShedCollector struct {
	stats func() shed.Stats
	err   error // why it cannot report anything; nil if it can

	admitted, refused, refusedBy, shadowed, shadowedBy, panics *prometheus.Desc
	shadow, overload, inFlight, limit, capacity, delay, drop   *prometheus.Desc
	tenants                                                    *prometheus.Desc
}

// NewShedCollector returns a collector for s, whose series carry the
// constant label shedder=name; register one per shedder (opts as for
// NewCollector). It reports SeriesPerShedder series named fusebox_shed_*,
// every one from the start (the package documentation lists them). A nil
// s, an empty or invalid name, or a constant label "shedder" in opts is
// refused when the collector is registered, with an error naming it.
func NewShedCollector(name string, s *shed.Shedder, opts Opts) *ShedCollector {
	var stats func() shed.Stats
	if s != nil {
		stats = s.Stats
	}
	c := newShedCollector(name, stats, opts)
	if s == nil {
		c.err = errors.New("metrics: NewShedCollector with a nil *shed.Shedder")
	}
	return c
}

// newShedCollector is NewShedCollector over any source of Stats.
func newShedCollector(name string, stats func() shed.Stats, opts Opts) *ShedCollector {
	c := &ShedCollector{stats: stats}
	switch _, taken := opts.ConstLabels["shedder"]; {
	case name == "":
		c.err = errors.New("metrics: NewShedCollector with an empty name")
	case !utf8.ValidString(name):
		c.err = errors.New("metrics: NewShedCollector with a name that is not valid UTF-8")
	case taken:
		c.err = errors.New("metrics: NewShedCollector: Opts.ConstLabels has a label \"shedder\", which the collector sets to the name")
	}
	ns := opts.Namespace
	if ns == "" {
		ns = "fusebox"
	}
	labels := prometheus.Labels{"shedder": name}
	for k, v := range opts.ConstLabels {
		labels[k] = v
	}
	desc := func(n, help string, label ...string) *prometheus.Desc {
		return prometheus.NewDesc(ns+"_shed_"+n, help, label, labels)
	}
	c.admitted = desc("admitted_total", "Requests the shedder admitted (in shadow mode: those it would have admitted).")
	c.refused = desc("refused_total", "Requests the shedder refused, by the priority they carried: critical, default or sheddable.", "priority")
	c.refusedBy = desc("refused_by_reason_total", "Requests the shedder refused, by reason: queue (the run queue's delay), limit (in-flight limit), tenant (over its fair share).", "reason")
	c.shadowed = desc("shadowed_total", "Requests shadow mode served although the shedder would have refused them, by priority.", "priority")
	c.shadowedBy = desc("shadowed_by_reason_total", "Requests shadow mode served although the shedder would have refused them, by reason: queue, limit, tenant.", "reason")
	c.panics = desc("callback_panics_total", "Panics of the shedder's OnShed callback, recovered.")
	c.shadow = desc("shadow", "1 while the shedder runs in shadow mode (it decides and reports, but admits every request), 0 while it enforces.")
	c.overload = desc("overload", "1 during an overload (the run queue's delay per request above the target), 0 outside one.")
	c.inFlight = desc("in_flight", "Admitted requests not done yet.")
	c.limit = desc("in_flight_limit", "The in-flight limit of an overload while requests pile up; 0 when there is none.")
	c.capacity = desc("capacity_per_second", "Requests per second the service completes, as the shedder estimates it: the most of one of its last 10 intervals.")
	c.delay = desc("delay_seconds", "Queueing delay per request the CPU's backlog added in the last interval.")
	c.drop = desc("drop_rate", "Share of the arrivals the shedder refuses, in [0, 1].")
	c.tenants = desc("tenants", "Tenant keys the shedder tracks now (bounded by shed.Config.Tenants).")
	return c
}

// invalid returns why c cannot report anything, or nil.
func (c *ShedCollector) invalid() error {
	switch {
	case c == nil || c.admitted == nil:
		return errors.New("metrics: a nil or zero *ShedCollector (make it with metrics.NewShedCollector)")
	case c.err != nil:
		return c.err
	}
	return nil
}

// Describe sends the descriptors of every metric the collector reports.
func (c *ShedCollector) Describe(ch chan<- *prometheus.Desc) {
	if err := c.invalid(); err != nil {
		ch <- prometheus.NewInvalidDesc(err)
		return
	}
	for _, d := range []*prometheus.Desc{c.admitted, c.refused, c.refusedBy, c.shadowed, c.shadowedBy, c.panics,
		c.shadow, c.overload, c.inFlight, c.limit, c.capacity, c.delay, c.drop, c.tenants} {
		ch <- d
	}
}

// Collect sends the shedder's current metrics.
func (c *ShedCollector) Collect(ch chan<- prometheus.Metric) {
	if err := c.invalid(); err != nil {
		refuse(ch, err)
		return
	}
	st := c.stats()
	gauge := func(d *prometheus.Desc, v float64, label ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, label...)
	}
	counter := func(d *prometheus.Desc, v uint64, label ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), label...)
	}
	flag := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	// A shedder is in shadow mode for its whole life (shed.Config.Shadow):
	// its counts of refusals are all real ones or all shadow ones.
	var shadowed [priority.Levels]uint64
	var shadowedBy [shed.Reasons]uint64
	refused, refusedBy := st.Shed, st.ByReason
	if st.Shadow {
		refused, refusedBy, shadowed, shadowedBy = shadowed, shadowedBy, refused, refusedBy
	}
	counter(c.admitted, st.Admitted)
	for p := range priority.Levels {
		name := priority.Priority(p).String()
		counter(c.refused, refused[p], name)
		counter(c.shadowed, shadowed[p], name)
	}
	for _, r := range shedReasons {
		counter(c.refusedBy, refusedBy[r], r.String())
		counter(c.shadowedBy, shadowedBy[r], r.String())
	}
	counter(c.panics, st.Panics)
	gauge(c.shadow, flag(st.Shadow))
	gauge(c.overload, flag(st.Overload))
	gauge(c.inFlight, float64(st.InFlight))
	gauge(c.limit, float64(st.Limit))
	gauge(c.capacity, st.Capacity)
	gauge(c.delay, st.Delay.Seconds())
	gauge(c.drop, st.DropRate)
	gauge(c.tenants, float64(st.Tenants))
}
