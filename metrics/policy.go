package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fusebox-go/fusebox/policy"
)

// PolicyCollector is a prometheus.Collector for a Retrier and a Hedger of
// package policy: at each scrape it reads their Stats and reports one
// series per supplier (label "supplier") and metric. Either may be nil. It
// keeps no state of its own and starts nothing; it is safe for concurrent
// use.
type PolicyCollector struct {
	r *policy.Retrier
	h *policy.Hedger

	retryCalls, attempts, retries, retryRefused *prometheus.Desc
	hedgeCalls, hedges, hedgesWon, hedgeRefused *prometheus.Desc
	hedgeDelay                                  *prometheus.Desc
}

// NewPolicyCollector returns a collector for r and h (either may be nil),
// with opts as for NewCollector. The metrics (all with the label
// supplier):
//
//	fusebox_retry_calls_total                  calls made through the Retrier
//	fusebox_retry_attempts_total               attempts, first ones included
//	fusebox_retries_total                      attempts after a first one
//	fusebox_retries_refused_total{by}          retries not made: by="budget" or by="context"
//	fusebox_hedge_calls_total                  calls made through the Hedger
//	fusebox_hedges_total                       second attempts started
//	fusebox_hedges_won_total                   hedges that answered first with a success
//	fusebox_hedges_refused_total{by}           hedges not started: by="budget" or by="executor"
//	fusebox_hedge_delay_seconds                the hedging delay in use
//
// rate(fusebox_retries_total[5m]) / rate(fusebox_retry_calls_total[5m]) is
// the share of extra calls the retries add, which the budget bounds.
func NewPolicyCollector(r *policy.Retrier, h *policy.Hedger, opts Opts) *PolicyCollector {
	ns := opts.Namespace
	if ns == "" {
		ns = "fusebox"
	}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(ns+"_"+name, help, append([]string{"supplier"}, labels...), opts.ConstLabels)
	}
	return &PolicyCollector{
		r: r, h: h,
		retryCalls:   desc("retry_calls_total", "Calls made through the retry policy."),
		attempts:     desc("retry_attempts_total", "Attempts made by the retry policy, first attempts included."),
		retries:      desc("retries_total", "Attempts after a first one: the extra calls retries added."),
		retryRefused: desc("retries_refused_total", "Retries not made: by the supplier's retry budget (budget) or because the caller's context ended or would have during the back-off (context).", "by"),
		hedgeCalls:   desc("hedge_calls_total", "Calls made through the hedging policy."),
		hedges:       desc("hedges_total", "Second attempts (hedges) started."),
		hedgesWon:    desc("hedges_won_total", "Hedges that answered first with a success."),
		hedgeRefused: desc("hedges_refused_total", "Hedges not started: by the supplier's hedge budget (budget) or because the breaker was not closed or too few slots were free (executor).", "by"),
		hedgeDelay:   desc("hedge_delay_seconds", "The hedging delay in use: the supplier's recent quantile, or the fixed delay."),
	}
}

// errZeroPolicyCollector is the error of a PolicyCollector that
// NewPolicyCollector did not make: it has no descriptors to report with.
var errZeroPolicyCollector = errors.New("metrics: a nil or zero *PolicyCollector (make it with metrics.NewPolicyCollector)")

// made reports whether NewPolicyCollector made c.
func (c *PolicyCollector) made() bool { return c != nil && c.retryCalls != nil }

// Describe sends the descriptors of every metric the collector reports.
func (c *PolicyCollector) Describe(ch chan<- *prometheus.Desc) {
	if !c.made() {
		ch <- prometheus.NewInvalidDesc(errZeroPolicyCollector)
		return
	}
	for _, d := range []*prometheus.Desc{c.retryCalls, c.attempts, c.retries, c.retryRefused, c.hedgeCalls, c.hedges, c.hedgesWon, c.hedgeRefused, c.hedgeDelay} {
		ch <- d
	}
}

// Collect sends the current counts of the policies, per supplier.
func (c *PolicyCollector) Collect(ch chan<- prometheus.Metric) {
	if !c.made() {
		refuse(ch, errZeroPolicyCollector)
		return
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	if c.r != nil {
		for _, s := range c.r.Stats() {
			counter(c.retryCalls, s.Calls, s.Supplier)
			counter(c.attempts, s.Attempts, s.Supplier)
			counter(c.retries, s.Retries, s.Supplier)
			counter(c.retryRefused, s.BudgetRefused, s.Supplier, "budget")
			counter(c.retryRefused, s.CtxRefused, s.Supplier, "context")
		}
	}
	if c.h != nil {
		for _, s := range c.h.Stats() {
			counter(c.hedgeCalls, s.Calls, s.Supplier)
			counter(c.hedges, s.Hedges, s.Supplier)
			counter(c.hedgesWon, s.Won, s.Supplier)
			counter(c.hedgeRefused, s.BudgetRefused, s.Supplier, "budget")
			counter(c.hedgeRefused, s.Refused, s.Supplier, "executor")
			ch <- prometheus.MustNewConstMetric(c.hedgeDelay, prometheus.GaugeValue, s.Delay.Seconds(), s.Supplier)
		}
	}
}
