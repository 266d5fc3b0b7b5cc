// Package metrics exports the executors of a fusebox Group to Prometheus.
//
// It is a module of its own, so that the core library does not depend on
// client_golang. One Collector reports, per supplier (label "supplier"),
// the breaker's state and its transitions by reason, the bulkhead's busy
// and free slots, the queue, the overdue calls, the calls by outcome, the
// rejections by reason and a histogram of call durations by outcome:
//
//	g, err := executor.NewGroup(cfg)
//	...
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(metrics.NewCollector(g, metrics.Opts{}))
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// The collector reads Executor.Stats at scrape time: nothing is counted
// twice, nothing runs between scrapes, and the numbers are those the
// executor itself keeps. Every supplier the Group's configuration lists
// has its series from startup; label values are snake_case; each supplier
// has SeriesPerSupplier series.
//
// A PolicyCollector reports the retries and hedges of package policy per
// supplier: attempts, retries, hedges started and won, and what the
// budgets refused (fusebox_retries_refused_total{by="budget"}).
//
// The call-duration histogram (fusebox_call_duration_seconds{outcome}) is
// the executor's own (executor.Stats.Durations): fixed buckets from 5 ms to
// 10 s, cumulative since the executor was made. The fuseotel module reports
// the same instruments through OpenTelemetry.
//
// Useful queries:
//
//	fusebox_breaker_state{state="open"} == 1                    suppliers being refused now
//	increase(fusebox_breaker_transitions_total{reason="saturation"}[5m]) > 0
//	                                                            a bulkhead ran full
//	sum by (supplier) (rate(fusebox_rejections_total[1m]))      calls refused per second
//	histogram_quantile(0.99, sum by (supplier, le) (rate(fusebox_call_duration_seconds_bucket{outcome="success"}[5m])))
//	                                                            p99 of successful calls
//	fusebox_slots_in_use / (fusebox_slots_in_use + fusebox_slots_free)
//	                                                            bulkhead utilisation
//	fusebox_breaker_failure_rate > 0.2 and fusebox_breaker_window_calls >= 10
//	                                                            a windowed breaker nearing its trip
package metrics
