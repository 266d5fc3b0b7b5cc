package fuseotel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
)

// shedReasons are the values of the reason attribute, in shed.Reason
// order (TestShedReasonsAreComplete checks the list).
var shedReasons = [...]shed.Reason{shed.Queue, shed.Limit, shed.Tenant}

// PointsPerShedder is the number of data points RegisterShedder observes
// per collection: 3 priorities and 3 reasons for refusals, the same for
// shadow mode's, and 10 instruments without a second attribute.
const PointsPerShedder = 2*(priority.Levels+len(shedReasons)) + 10

// RegisterShedder creates the instruments of an inbound shedder (package
// shed) on a meter of mp and registers a callback that reads s.Stats at
// each collection, with the attribute shedder=name (a tenant key is never
// an attribute). The instruments are the metrics package's ShedCollector's,
// named so that OpenTelemetry's Prometheus exporter gives its names:
// fusebox.shed.admitted, .refused{priority}, .refused_by_reason{reason},
// .shadowed{priority}, .shadowed_by_reason{reason}, .callback_panics
// (counters), .shadow, .overload, .in_flight, .in_flight_limit, .tenants,
// .capacity ({request}/s), .delay (s) and .drop_rate (gauges). It returns
// an error naming the argument for a nil s or mp or an empty name.
func RegisterShedder(name string, s *shed.Shedder, mp metric.MeterProvider, opts Opts) (metric.Registration, error) {
	switch {
	case s == nil:
		return nil, errors.New("fuseotel: RegisterShedder with a nil *shed.Shedder")
	case mp == nil:
		return nil, errors.New("fuseotel: RegisterShedder with a nil metric.MeterProvider")
	case name == "":
		return nil, errors.New("fuseotel: RegisterShedder with an empty name")
	}
	return registerShedder(name, s.Stats, mp, opts)
}

// registerShedder is RegisterShedder over any source of Stats.
func registerShedder(name string, stats func() shed.Stats, mp metric.MeterProvider, opts Opts) (metric.Registration, error) {
	p := opts.Prefix
	if p == "" {
		p = "fusebox"
	}
	p += ".shed."
	m := mp.Meter(ScopeName)
	o := &shedObserver{stats: stats, base: append(append([]attribute.KeyValue{}, opts.Attributes...), attribute.String("shedder", name))}
	var errs []error
	counter := func(n, desc string) metric.Int64ObservableCounter {
		i, err := m.Int64ObservableCounter(p+n, metric.WithUnit("{request}"), metric.WithDescription(desc))
		errs = append(errs, err)
		return i
	}
	gauge := func(n, unit, desc string) metric.Int64ObservableGauge {
		i, err := m.Int64ObservableGauge(p+n, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return i
	}
	float := func(n, unit, desc string) metric.Float64ObservableGauge {
		i, err := m.Float64ObservableGauge(p+n, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return i
	}
	o.admitted = counter("admitted", "Requests the shedder admitted (in shadow mode: those it would have admitted).")
	o.refused = counter("refused", "Requests the shedder refused, by the priority they carried: critical, default or sheddable.")
	o.refusedBy = counter("refused_by_reason", "Requests the shedder refused, by reason: queue (the run queue's delay), limit (in-flight limit), tenant (over its fair share).")
	o.shadowed = counter("shadowed", "Requests shadow mode served although the shedder would have refused them, by priority.")
	o.shadowedBy = counter("shadowed_by_reason", "Requests shadow mode served although the shedder would have refused them, by reason: queue, limit, tenant.")
	pan, err := m.Int64ObservableCounter(p+"callback_panics", metric.WithUnit("{panic}"),
		metric.WithDescription("Panics of the shedder's OnShed callback, recovered."))
	errs = append(errs, err)
	o.panics = pan
	o.shadow = gauge("shadow", "1", "1 while the shedder runs in shadow mode (it decides and reports, but admits every request), 0 while it enforces.")
	o.overload = gauge("overload", "1", "1 during an overload (the run queue's delay per request above the target), 0 outside one.")
	o.inFlight = gauge("in_flight", "{request}", "Admitted requests not done yet.")
	o.limit = gauge("in_flight_limit", "{request}", "The in-flight limit of an overload while requests pile up; 0 when there is none.")
	o.tenants = gauge("tenants", "{tenant}", "Tenant keys the shedder tracks now (bounded by shed.Config.Tenants).")
	o.capacity = float("capacity", "{request}/s", "Requests per second the service completes, as the shedder estimates it: the most of one of its last 10 intervals.")
	o.delay = float("delay", "s", "Queueing delay per request the CPU's backlog added in the last interval.")
	o.drop = float("drop_rate", "1", "Share of the arrivals the shedder refuses, in [0, 1].")
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m.RegisterCallback(o.observe, o.admitted, o.refused, o.refusedBy, o.shadowed, o.shadowedBy, o.panics,
		o.shadow, o.overload, o.inFlight, o.limit, o.tenants, o.capacity, o.delay, o.drop)
}

type shedObserver struct {
	stats func() shed.Stats
	base  []attribute.KeyValue

	admitted, refused, refusedBy, shadowed, shadowedBy, panics metric.Int64ObservableCounter
	shadow, overload, inFlight, limit, tenants                 metric.Int64ObservableGauge
	capacity, delay, drop                                      metric.Float64ObservableGauge
}

func (s *shedObserver) observe(_ context.Context, o metric.Observer) error {
	st := s.stats()
	attrs := func(kv ...attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(append(append([]attribute.KeyValue{}, s.base...), kv...)...))
	}
	plain := attrs()
	flag := func(b bool) int64 {
		if b {
			return 1
		}
		return 0
	}
	// A shedder is in shadow mode for its whole life: its refusals are all
	// real ones or all shadow ones.
	var shadowed [priority.Levels]uint64
	var shadowedBy [shed.Reasons]uint64
	refused, refusedBy := st.Shed, st.ByReason
	if st.Shadow {
		refused, refusedBy, shadowed, shadowedBy = shadowed, shadowedBy, refused, refusedBy
	}
	o.ObserveInt64(s.admitted, int64(st.Admitted), plain)
	for p := range priority.Levels {
		a := attrs(attribute.String("priority", priority.Priority(p).String()))
		o.ObserveInt64(s.refused, int64(refused[p]), a)
		o.ObserveInt64(s.shadowed, int64(shadowed[p]), a)
	}
	for _, r := range shedReasons {
		a := attrs(attribute.String("reason", r.String()))
		o.ObserveInt64(s.refusedBy, int64(refusedBy[r]), a)
		o.ObserveInt64(s.shadowedBy, int64(shadowedBy[r]), a)
	}
	o.ObserveInt64(s.panics, int64(st.Panics), plain)
	o.ObserveInt64(s.shadow, flag(st.Shadow), plain)
	o.ObserveInt64(s.overload, flag(st.Overload), plain)
	o.ObserveInt64(s.inFlight, st.InFlight, plain)
	o.ObserveInt64(s.limit, st.Limit, plain)
	o.ObserveInt64(s.tenants, int64(st.Tenants), plain)
	o.ObserveFloat64(s.capacity, st.Capacity, plain)
	o.ObserveFloat64(s.delay, st.Delay.Seconds(), plain)
	o.ObserveFloat64(s.drop, st.DropRate, plain)
	return nil
}
