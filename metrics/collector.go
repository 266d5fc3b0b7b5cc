package metrics

import (
	"errors"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/priority"
)

// Opts configures a Collector. The zero value is ready to use.
type Opts struct {
	// Namespace is the first part of every metric name. "" means
	// "fusebox", as in fusebox_calls_total.
	Namespace string
	// ConstLabels are added to every metric. Use them to tell two groups
	// apart when both are registered, e.g. {"group": "http"}; nil means
	// none.
	ConstLabels prometheus.Labels
}

// Collector is a prometheus.Collector for every executor of a Group: at
// each scrape it reads Executor.Stats of each supplier of the group and
// reports one series per supplier (label "supplier") and metric. It keeps
// no state of its own and starts nothing; an executor evicted from the
// group disappears from the next scrape. It is safe for concurrent use.
type Collector struct {
	g *executor.Group

	state, slotsInUse, slotsFree, queueLength, queueCapacity, overdue *prometheus.Desc
	failureRate, slowRate, windowCalls                                *prometheus.Desc

	calls, timeouts, panics, cancelled, queueTimeouts *prometheus.Desc
	rejections, byPriority, transitions               *prometheus.Desc
	durations                                         *prometheus.Desc
	shadow, shadowed                                  *prometheus.Desc
	limit, limitBaseline, limitGradient               *prometheus.Desc
}

// outcomes are the label values of the outcome label, in breaker.Outcome
// order.
var outcomes = [...]breaker.Outcome{breaker.Success, breaker.Failure, breaker.Ignored}

// seriesPerHistogram is what one histogram costs: a series per bucket, the
// +Inf bucket, _sum and _count.
const seriesPerHistogram = len(executor.DurationBuckets) + 3

// states are the label values of the state gauge, in breaker.State order.
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

// shadowReasons are the label values of the shadowed counter: every
// rejection but closed, which shadow mode enforces too.
var shadowReasons = [...]executor.Rejection{executor.RejectedOpen, executor.RejectedSaturated,
	executor.RejectedQueueFull, executor.RejectedBusy, executor.RejectedThrottled}

// SeriesPerSupplier is the number of series the collector reports for
// each supplier: 5 states, 14 transition reasons, 6 rejection reasons, 3
// priorities of rejections, 3 outcomes, 5 shadowed reasons, 16 metrics
// without a second label, and the call-duration histogram: 3 outcomes of
// 14 series each (11 buckets, +Inf, _sum and _count). The number of series
// is this times the number of suppliers: with one executor per host, bound
// the hosts with GroupConfig.MaxSuppliers, GroupConfig.IdleTimeout or
// GroupConfig.Strict.
const SeriesPerSupplier = len(states) + len(reasons) + len(rejections) + priority.Levels + 3 + len(shadowReasons) + 16 +
	len(outcomes)*seriesPerHistogram

// NewCollector returns a collector for g. Register it once per group:
//
//	prometheus.MustRegister(metrics.NewCollector(g, metrics.Opts{}))
//
// The metrics (counters end in _total, names are plural nouns, ratios are
// in [0, 1]; all carry the label supplier):
//
//	fusebox_breaker_state{state}              1 for the breaker's state, 0 for the others
//	fusebox_breaker_transitions_total{reason} transitions by the reason they had
//	fusebox_breaker_failure_rate              failures / calls in the breaker's sliding window
//	fusebox_breaker_slow_call_rate            slow calls / calls in the sliding window
//	fusebox_breaker_window_calls              calls in the sliding window
//	fusebox_slots_in_use, fusebox_slots_free  bulkhead slots in use and free
//	fusebox_queue_length, fusebox_queue_capacity
//	fusebox_calls_overdue                     calls past their deadline whose function still runs
//	fusebox_calls_total{outcome}              finished calls: success, failure or ignored
//	fusebox_call_timeouts_total               calls that timed out (counted as failures too)
//	fusebox_call_panics_total                 calls that panicked (counted as failures too)
//	fusebox_calls_cancelled_total             calls their caller cancelled (counted as ignored too)
//	fusebox_queue_timeouts_total              calls that never got a slot in time (ignored too)
//	fusebox_rejections_total{reason}          calls refused: open, saturated, queue_full, closed, busy
//	fusebox_rejections_by_priority_total{priority} the same, by the call's priority: critical, default, sheddable
//	fusebox_call_duration_seconds{outcome}    histogram of the durations of the calls that ran, by outcome
//	fusebox_shadow                            1 in shadow mode (executor.Config.Shadow), 0 enforcing
//	fusebox_shadowed_total{reason}            calls shadow mode ran that enforce mode would have refused
//	fusebox_slots_limit                       the bulkhead's slots: Config.Slots, or the adaptive limit in force
//	fusebox_limit_baseline_seconds            the latency the adaptive limit judges by (0: fixed bulkhead)
//	fusebox_limit_gradient                    the adaptive limit's last gradient in [0.5, 1] (1: no cut; fixed: 1)
//
// In shadow mode the breaker's state and transitions are the shadow
// breaker's (what enforce mode would do) and rejections_total stays at 0
// but for closed: read shadowed_total beside fusebox_shadow.
//
// Label values are snake_case: state="half_open", reason="queue_full".
// The rates are 0 while the window is empty and for a breaker without a
// rate rule (which keeps no window); window_calls says how much they
// weigh. Every label value is reported from the start, at 0 when nothing
// has happened yet, so that rates and alerts see the first increment, and
// every supplier the Group's configuration lists is reported from
// NewGroup on, before its first call: SeriesPerSupplier (94) series per
// supplier.
//
// The call-duration histogram has the fixed buckets of
// executor.DurationBuckets (5 ms to 10 s, Prometheus's defaults). A call
// counts from the moment it got its slot until its function returned, or
// until its deadline if it timed out (a timeout is a failure at about the
// invocation timeout); calls that never ran are not in it.
//
// A collector for a nil g cannot report anything: registering it returns
// an error naming the mistake, and so does a scrape.
func NewCollector(g *executor.Group, opts Opts) *Collector {
	ns := opts.Namespace
	if ns == "" {
		ns = "fusebox"
	}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(ns+"_"+name, help, append([]string{"supplier"}, labels...), opts.ConstLabels)
	}
	return &Collector{
		g: g,
		state: desc("breaker_state",
			"State of the supplier's circuit breaker: 1 for the current state, 0 for the others.", "state"),
		transitions: desc("breaker_transitions_total",
			"Transitions of the supplier's circuit breaker, by the reason they had.", "reason"),
		failureRate: desc("breaker_failure_rate",
			"Failures per call in the breaker's sliding window, in [0, 1]; 0 while the window is empty or the breaker has no rate rule."),
		slowRate: desc("breaker_slow_call_rate",
			"Slow calls per call in the breaker's sliding window, in [0, 1]; 0 while the window is empty or the breaker has no rate rule."),
		windowCalls: desc("breaker_window_calls",
			"Calls in the breaker's sliding window: the rates weigh something once it reaches the breaker's minimum number of calls."),
		slotsInUse: desc("slots_in_use",
			"Bulkhead slots held by running calls, overdue calls included."),
		slotsFree: desc("slots_free",
			"Free bulkhead slots."),
		queueLength: desc("queue_length",
			"Calls waiting in the queue for a slot."),
		queueCapacity: desc("queue_capacity",
			"Size of the queue (0 when the supplier has none)."),
		overdue: desc("calls_overdue",
			"Calls past their deadline whose function has not returned yet; each still holds a slot."),
		calls: desc("calls_total",
			"Finished calls, by outcome as the breaker classified them: success, failure or ignored.", "outcome"),
		timeouts: desc("call_timeouts_total",
			"Calls that outlived their invocation timeout (also counted as failures unless classified otherwise)."),
		panics: desc("call_panics_total",
			"Calls whose function panicked (also counted as failures unless classified otherwise)."),
		cancelled: desc("calls_cancelled_total",
			"Calls whose caller cancelled them (also counted as ignored)."),
		queueTimeouts: desc("queue_timeouts_total",
			"Calls that waited in the queue for the queue timeout without getting a slot, and never ran (also counted as ignored)."),
		durations: desc("call_duration_seconds",
			"Durations of the calls that ran, from getting a slot to the function's return (or the deadline of a call that timed out), by outcome: success, failure or ignored.", "outcome"),
		shadow: desc("shadow",
			"1 while the supplier runs in shadow mode (every rule evaluated, nothing refused), 0 while it enforces."),
		shadowed: desc("shadowed_total",
			"Calls that shadow mode ran although enforce mode would have refused them, by reason: open, saturated, queue_full, busy.", "reason"),
		limit: desc("slots_limit",
			"The bulkhead's slots: executor.Config.Slots, or with executor.Config.Adaptive the limit in force."),
		limitBaseline: desc("limit_baseline_seconds",
			"The latency the adaptive limit judges by: the lowest mean of recent windows (0 with a fixed bulkhead)."),
		limitGradient: desc("limit_gradient",
			"The adaptive limit's last gradient, 1.5 × baseline / window mean latency in [0.5, 1]: below 1 the limit was cut by it (1 with a fixed bulkhead)."),
		rejections: desc("rejections_total",
			"Calls refused without running, by reason: open, saturated, queue_full, closed, busy (a full bulkhead of young calls: the breaker stayed closed).", "reason"),
		byPriority: desc("rejections_by_priority_total",
			"Calls refused without running, by the priority their context carried: critical, default or sheddable (see package priority).", "priority"),
	}
}

// invalid returns why c cannot report anything, or nil. Neither mistake
// can be refused by NewCollector, which returns no error: it is refused by
// Registry.Register instead, through an invalid descriptor, and by a
// scrape, through an invalid metric, rather than by a panic on a goroutine
// of Registry.Gather, which no one can recover.
func (c *Collector) invalid() error {
	switch {
	case c == nil || c.state == nil:
		return errors.New("metrics: a nil or zero *Collector (make it with metrics.NewCollector)")
	case c.g == nil:
		return errors.New("metrics: NewCollector with a nil *executor.Group")
	}
	return nil
}

// refuse sends err as a scrape's error: Registry.Gather returns it.
func refuse(ch chan<- prometheus.Metric, err error) {
	ch <- prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(err), err)
}

// Describe sends the descriptors of every metric the collector reports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	if err := c.invalid(); err != nil {
		ch <- prometheus.NewInvalidDesc(err)
		return
	}
	for _, d := range []*prometheus.Desc{
		c.state, c.transitions, c.failureRate, c.slowRate, c.windowCalls, c.slotsInUse, c.slotsFree, c.queueLength, c.queueCapacity, c.overdue,
		c.calls, c.timeouts, c.panics, c.cancelled, c.queueTimeouts, c.rejections, c.byPriority, c.durations,
		c.shadow, c.shadowed, c.limit, c.limitBaseline, c.limitGradient,
	} {
		ch <- d
	}
}

// Collect sends the current metrics of every executor of the group.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if err := c.invalid(); err != nil {
		refuse(ch, err)
		return
	}
	for _, name := range c.g.Names() {
		if ex, ok := c.g.Lookup(name); ok {
			c.collect(ch, ex.Stats())
		}
	}
}

func (c *Collector) collect(ch chan<- prometheus.Metric, st executor.Stats) {
	// Prometheus refuses label values that are not UTF-8, and one bad
	// series fails the whole scrape. The executor refuses such names, but
	// a scrape must never depend on that.
	s := strings.ToValidUTF8(st.Supplier, "\uFFFD")
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{s}, labels...)...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append([]string{s}, labels...)...)
	}

	for _, state := range states {
		v := 0.0
		if st.Breaker.State == state {
			v = 1
		}
		gauge(c.state, v, snake(state.String()))
	}
	for _, r := range reasons {
		counter(c.transitions, st.Breaker.Transitions[r], snake(r.String()))
	}
	failureRate, slowRate := 0.0, 0.0
	if n := st.Breaker.WindowCalls; n > 0 {
		failureRate = float64(st.Breaker.WindowFailures) / float64(n)
		slowRate = float64(st.Breaker.WindowSlowCalls) / float64(n)
	}
	gauge(c.failureRate, failureRate)
	gauge(c.slowRate, slowRate)
	gauge(c.windowCalls, float64(st.Breaker.WindowCalls))
	gauge(c.slotsInUse, float64(st.InUse))
	gauge(c.slotsFree, float64(st.Free))
	gauge(c.queueLength, float64(st.Queued))
	gauge(c.queueCapacity, float64(st.QueueCap))
	gauge(c.overdue, float64(st.Overdue))

	counter(c.calls, st.Successes, breaker.Success.String())
	counter(c.calls, st.Failures, breaker.Failure.String())
	counter(c.calls, st.Ignored, breaker.Ignored.String())
	counter(c.timeouts, st.Timeouts)
	counter(c.panics, st.Panics)
	counter(c.cancelled, st.Cancelled)
	counter(c.queueTimeouts, st.QueueTimeouts)
	for _, r := range rejections {
		counter(c.rejections, st.Rejected.Of(r), snake(r.String()))
	}
	shadow := 0.0
	if st.Shadow {
		shadow = 1
	}
	gauge(c.shadow, shadow)
	gauge(c.limit, float64(st.Slots))
	gauge(c.limitBaseline, st.LimitBaseline.Seconds())
	gradient := 1.0
	if st.Adaptive {
		gradient = st.LimitGradient
	}
	gauge(c.limitGradient, gradient)
	for _, r := range shadowReasons {
		counter(c.shadowed, st.Shadowed.Of(r), snake(r.String()))
	}
	for p, n := range st.RejectedByPriority {
		counter(c.byPriority, n, priority.Priority(p).String())
	}
	for _, o := range outcomes {
		h := &st.Durations[o]
		buckets := make(map[float64]uint64, len(bounds))
		for i, b := range bounds {
			buckets[b] = h.Buckets[i]
		}
		ch <- prometheus.MustNewConstHistogram(c.durations, h.Count, h.Sum.Seconds(), buckets, s, o.String())
	}
}

// bounds are the histogram's bucket bounds in seconds.
var bounds = func() (b [len(executor.DurationBuckets)]float64) {
	for i, d := range executor.DurationBuckets {
		b[i] = d.Seconds()
	}
	return b
}()

// snake turns the library's kebab-case names ("half-open") into the
// snake_case label values Prometheus users expect ("half_open").
func snake(s string) string { return strings.ReplaceAll(s, "-", "_") }
