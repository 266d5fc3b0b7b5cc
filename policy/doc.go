// Package policy puts two policies around the calls an executor makes:
// retries within a budget, and hedged calls. Both compose with any
// executor (and with a Group, through Group.Executor), send every attempt
// through the supplier's breaker and bulkhead, and keep their counts per
// supplier.
//
// The story: a supplier starts failing half of its calls. Every caller
// retries three times, so the supplier, already in trouble, gets 1.75
// times its usual load, and a second supplier behind it the same. A
// Retrier with a budget lets retries add at most 10 % of the supplier's
// recent calls (plus a floor of 10 per 10 s, so that a quiet supplier can
// still be retried): the supplier's load stays near 1.1 times the callers',
// and the calls the budget refuses end with their last error, at once.
// A retry is never made into a known refusal (an open breaker), and a call
// that may have run already (a timeout) or found the bulkhead full is
// retried only when the caller says it is idempotent:
//
//	retrier, _ := policy.NewRetrier(policy.RetryConfig{})
//	quote, err := policy.RetryIdempotent(ctx, retrier, ex, func(ctx context.Context) (Quote, error) {
//		return quotes.Get(ctx, sku)
//	})
//
// A search supplier answers in 20 ms, but one call in fifty takes a second
// (a slow replica, a pause). A Hedger starts a second attempt of a call
// still running after the supplier's recent p95 and takes the first
// success: the callers' p99 falls from a second to a few tens of
// milliseconds, for a few percent of extra calls. The hedge yields to the
// callers' own calls (it needs a free slot beyond a reserve and a closed
// breaker), a budget caps the hedges at 5 % of the recent calls, so that a
// supplier that is slow for everyone is not sent twice the load, and the
// attempt that lost is cancelled and gives its slot back:
//
//	hedger, _ := policy.NewHedger(policy.HedgeConfig{})
//	hits, err := policy.Hedge(ctx, hedger, ex, func(ctx context.Context) ([]Hit, error) {
//		return search.Query(ctx, q)
//	})
//
// Budgets are computed from the clock when a call uses them (decayed
// counts, see Budget): no goroutine, no timer. Retrier.Stats and
// Hedger.Stats count attempts, retries, hedges started and won, and what
// the budgets refused, per supplier; the metrics module exports them to
// Prometheus.
package policy
