package fuseotel

import (
	"context"
	"errors"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// ScopeName is the instrumentation scope of the meter the bridge uses.
const ScopeName = "github.com/fusebox-go/fusebox/fuseotel"

// Opts configures Register. The zero value is ready to use.
type Opts struct {
	// Prefix is the first part of every instrument name. "" means
	// "fusebox", as in fusebox.calls.
	Prefix string
	// Attributes are added to every observation. Use them to tell two
	// groups apart when both are registered, e.g. attribute.String("group",
	// "http"); nil means none.
	Attributes []attribute.KeyValue
}

// Register creates the instruments on a meter of mp and registers one
// callback that, at each collection, reads Executor.Stats of every supplier
// of g and observes one data point per supplier (attribute "supplier") and
// instrument. It keeps no state of its own and starts nothing; an executor
// evicted from the group disappears from the next collection. One made
// again for the same name counts from 0: through OpenTelemetry's Prometheus
// exporter that is a counter reset, as after a restart, but the metrics API
// gives an observable counter no start time per series, so an OTLP
// consumer sees the drop under the series' first start time and must take
// a drop for a reset (the duration producer's histograms do get a new
// start time). Unregister the returned registration to stop observing g.
//
// The instruments, named so that OpenTelemetry's Prometheus exporter gives
// the names of the metrics package's collector (dots become underscores,
// counters gain _total):
//
//	fusebox.breaker.state{state}              1 for the breaker's state, 0 for the others (gauge)
//	fusebox.breaker.transitions{reason}       transitions by the reason they had (counter)
//	fusebox.breaker.failure_rate              failures / calls in the breaker's sliding window (gauge, 0..1)
//	fusebox.breaker.slow_call_rate            slow calls / calls in the sliding window (gauge, 0..1)
//	fusebox.breaker.window_calls              calls in the sliding window (gauge)
//	fusebox.slots.in_use, fusebox.slots.free  bulkhead slots in use and free (gauges)
//	fusebox.queue.length, fusebox.queue.capacity
//	fusebox.calls.overdue                     calls past their deadline whose function still runs (gauge)
//	fusebox.calls{outcome}                    finished calls: success, failure or ignored (counter)
//	fusebox.call.timeouts, fusebox.call.panics, fusebox.calls.cancelled, fusebox.queue.timeouts (counters)
//	fusebox.rejections{reason}                calls refused: open, saturated, queue_full, closed (counter)
//
// The call-duration histogram (fusebox.call.duration, seconds) comes from
// NewDurationProducer instead: the metrics API has no observable histogram.
//
// Label values are snake_case ("half_open", "queue_full"). Every value of
// every attribute is observed from the start, at 0 when nothing has
// happened yet, so that rates and alerts see the first increment: a fixed
// number of series per supplier (see SeriesPerSupplier).
func Register(g *executor.Group, mp metric.MeterProvider, opts Opts) (metric.Registration, error) {
	if g == nil {
		return nil, errors.New("fuseotel: Register with a nil *executor.Group")
	}
	if mp == nil {
		return nil, errors.New("fuseotel: Register with a nil metric.MeterProvider")
	}
	p := opts.Prefix
	if p == "" {
		p = "fusebox"
	}
	m := mp.Meter(ScopeName)
	b := &bridge{g: g, base: opts.Attributes}
	var errs []error
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		i, err := m.Int64ObservableGauge(p+"."+name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return i
	}
	ratio := func(name, desc string) metric.Float64ObservableGauge {
		i, err := m.Float64ObservableGauge(p+"."+name, metric.WithUnit("1"), metric.WithDescription(desc))
		errs = append(errs, err)
		return i
	}
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		i, err := m.Int64ObservableCounter(p+"."+name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return i
	}
	b.state = gauge("breaker.state", "1",
		"State of the supplier's circuit breaker: 1 for the current state, 0 for the others.")
	b.transitions = counter("breaker.transitions", "{transition}",
		"Transitions of the supplier's circuit breaker, by the reason they had.")
	b.failureRate = ratio("breaker.failure_rate",
		"Failures per call in the breaker's sliding window; 0 while the window is empty or the breaker has none.")
	b.slowRate = ratio("breaker.slow_call_rate",
		"Slow calls per call in the breaker's sliding window; 0 while the window is empty or the breaker has none.")
	b.windowCalls = gauge("breaker.window_calls", "{call}",
		"Calls in the breaker's sliding window: the rates mean something once it reaches the breaker's minimum.")
	b.slotsInUse = gauge("slots.in_use", "{slot}", "Bulkhead slots held by running calls, overdue calls included.")
	b.slotsFree = gauge("slots.free", "{slot}", "Free bulkhead slots.")
	b.queueLength = gauge("queue.length", "{call}", "Calls waiting in the queue for a slot.")
	b.queueCapacity = gauge("queue.capacity", "{call}", "Size of the queue (0 when the supplier has none).")
	b.overdue = gauge("calls.overdue", "{call}",
		"Calls past their deadline whose function has not returned yet; each still holds a slot.")
	b.calls = counter("calls", "{call}",
		"Finished calls, by outcome as the breaker classified them: success, failure or ignored.")
	b.timeouts = counter("call.timeouts", "{call}",
		"Calls that outlived their invocation timeout (also counted as failures unless classified otherwise).")
	b.panics = counter("call.panics", "{call}",
		"Calls whose function panicked (also counted as failures unless classified otherwise).")
	b.cancelled = counter("calls.cancelled", "{call}", "Calls whose caller cancelled them (also counted as ignored).")
	b.queueTimeouts = counter("queue.timeouts", "{call}",
		"Calls that waited in the queue for the queue timeout without getting a slot, and never ran (also counted as ignored).")
	b.rejections = counter("rejections", "{call}",
		"Calls refused without running, by reason: open, saturated, queue_full, closed.")
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m.RegisterCallback(b.observe,
		b.state, b.transitions, b.failureRate, b.slowRate, b.windowCalls,
		b.slotsInUse, b.slotsFree, b.queueLength, b.queueCapacity, b.overdue,
		b.calls, b.timeouts, b.panics, b.cancelled, b.queueTimeouts, b.rejections)
}

// SeriesPerSupplier is the number of data points the bridge observes per
// supplier: 5 states, 14 transition reasons, 6 rejection reasons, 3
// outcomes, and 12 instruments without a second attribute. The duration
// producer adds DurationPointsPerSupplier histogram points.
const SeriesPerSupplier = len(states) + len(reasons) + len(rejections) + 3 + 12

// states are the values of the state attribute, in breaker.State order.
var states = [...]breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen, breaker.ForcedOpen, breaker.Disabled}

// reasons are the label values of the transition counter: every
// breaker.Reason but the "none" of a breaker that never changed state
// (TestReasonsAreComplete checks the list).
var reasons = [...]breaker.Reason{breaker.ConsecutiveFailures, breaker.ErrorKind, breaker.FailureRate,
	breaker.SlowCallRate, breaker.Saturation, breaker.QueueFull, breaker.Manual, breaker.ResetTimeout,
	breaker.ProbesSucceeded, breaker.ProbeFailed, breaker.ProbeDeferred, breaker.QueueDrained,
	breaker.Remote, breaker.ReadyToTrip}

// rejections are the label values of the rejection counter.
var rejections = [...]executor.Rejection{executor.RejectedOpen, executor.RejectedSaturated,
	executor.RejectedQueueFull, executor.RejectedClosed, executor.RejectedBusy, executor.RejectedThrottled}

type bridge struct {
	g    *executor.Group
	base []attribute.KeyValue

	state, windowCalls, slotsInUse, slotsFree, queueLength, queueCapacity, overdue metric.Int64ObservableGauge
	failureRate, slowRate                                                          metric.Float64ObservableGauge
	transitions, calls, timeouts, panics, cancelled, queueTimeouts, rejections     metric.Int64ObservableCounter
}

func (b *bridge) observe(_ context.Context, o metric.Observer) error {
	for _, name := range b.g.Names() {
		if ex, ok := b.g.Lookup(name); ok {
			b.observeOne(o, ex.Stats())
		}
	}
	return nil
}

func (b *bridge) observeOne(o metric.Observer, st executor.Stats) {
	supplier := attribute.String("supplier", st.Supplier)
	attrs := func(kv ...attribute.KeyValue) metric.MeasurementOption {
		all := make([]attribute.KeyValue, 0, len(b.base)+1+len(kv))
		all = append(append(append(all, b.base...), supplier), kv...)
		return metric.WithAttributeSet(attribute.NewSet(all...))
	}
	plain := attrs()
	gauge := func(i metric.Int64ObservableGauge, v int) { o.ObserveInt64(i, int64(v), plain) }
	counter := func(i metric.Int64Observable, v uint64, kv ...attribute.KeyValue) {
		o.ObserveInt64(i, int64(v), attrs(kv...))
	}

	for _, s := range states {
		v := int64(0)
		if st.Breaker.State == s {
			v = 1
		}
		o.ObserveInt64(b.state, v, attrs(attribute.String("state", snake(s.String()))))
	}
	for _, r := range reasons {
		counter(b.transitions, st.Breaker.Transitions[r], attribute.String("reason", snake(r.String())))
	}
	failureRate, slowRate := 0.0, 0.0
	if n := st.Breaker.WindowCalls; n > 0 {
		failureRate = float64(st.Breaker.WindowFailures) / float64(n)
		slowRate = float64(st.Breaker.WindowSlowCalls) / float64(n)
	}
	o.ObserveFloat64(b.failureRate, failureRate, plain)
	o.ObserveFloat64(b.slowRate, slowRate, plain)
	gauge(b.windowCalls, st.Breaker.WindowCalls)
	gauge(b.slotsInUse, st.InUse)
	gauge(b.slotsFree, st.Free)
	gauge(b.queueLength, st.Queued)
	gauge(b.queueCapacity, st.QueueCap)
	gauge(b.overdue, st.Overdue)

	counter(b.calls, st.Successes, attribute.String("outcome", breaker.Success.String()))
	counter(b.calls, st.Failures, attribute.String("outcome", breaker.Failure.String()))
	counter(b.calls, st.Ignored, attribute.String("outcome", breaker.Ignored.String()))
	counter(b.timeouts, st.Timeouts)
	counter(b.panics, st.Panics)
	counter(b.cancelled, st.Cancelled)
	counter(b.queueTimeouts, st.QueueTimeouts)
	for _, r := range rejections {
		counter(b.rejections, st.Rejected.Of(r), attribute.String("reason", snake(r.String())))
	}
}

// snake turns the library's kebab-case names ("half-open") into the
// snake_case label values metrics systems expect ("half_open").
func snake(s string) string { return strings.ReplaceAll(s, "-", "_") }
