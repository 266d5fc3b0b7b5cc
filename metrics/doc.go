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
// A ShedCollector reports an inbound shedder (package shed) under the
// label shedder; priorities and reasons are fixed sets, and a tenant key
// is never a label:
//
//	fusebox_shed_admitted_total                   requests admitted
//	fusebox_shed_refused_total{priority}          requests refused: critical, default, sheddable
//	fusebox_shed_refused_by_reason_total{reason}  the same by reason: queue, limit, tenant
//	fusebox_shed_shadowed_total{priority}         requests shadow mode served that it would have refused
//	fusebox_shed_shadowed_by_reason_total{reason} the same by reason
//	fusebox_shed_shadow, fusebox_shed_overload    1 in shadow mode; 1 during an overload
//	fusebox_shed_in_flight                        admitted requests not done
//	fusebox_shed_in_flight_limit                  the in-flight limit of an overload (0: none)
//	fusebox_shed_capacity_per_second              requests per second the service completes, estimated
//	fusebox_shed_delay_seconds                    the run queue's delay per request, last interval
//	fusebox_shed_drop_rate                        share of the arrivals refused, in [0, 1]
//	fusebox_shed_tenants                          tenant keys tracked
//	fusebox_shed_callback_panics_total            panics of shed.Config.OnShed recovered
//
//	sum by (priority) (rate(fusebox_shed_refused_total[1m]))   requests shed per second
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
