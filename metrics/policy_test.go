package metrics_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/metrics"
	"github.com/fusebox-go/fusebox/policy"
)

func TestPolicyCollector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 4, InvocationTimeout: time.Second}})
		ex := executorOf(t, g, "quotes")
		r, err := policy.NewRetrier(policy.RetryConfig{Backoff: time.Millisecond, Budget: policy.Budget{Ratio: 0.1, Floor: 1}})
		require.NoError(t, err)
		h, err := policy.NewHedger(policy.HedgeConfig{Delay: 10 * time.Millisecond})
		require.NoError(t, err)

		// Two calls of three failed attempts each: the floor allows one
		// retry, the budget refuses the next three.
		for range 2 {
			_, _ = policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { return 0, errBoom })
		}
		var n atomic.Int32
		_, err = policy.Hedge(context.Background(), h, ex, func(ctx context.Context) (int, error) {
			if n.Add(1) == 1 {
				<-ctx.Done()
				return 0, ctx.Err()
			}
			return 1, nil
		})
		require.NoError(t, err)

		reg := prometheus.NewRegistry()
		reg.MustRegister(metrics.NewPolicyCollector(r, h, metrics.Opts{}))
		want := `
# HELP fusebox_retry_attempts_total Attempts made by the retry policy, first attempts included.
# TYPE fusebox_retry_attempts_total counter
fusebox_retry_attempts_total{supplier="quotes"} 3
# HELP fusebox_retries_refused_total Retries not made: by the supplier's retry budget (budget) or because the caller's context ended or would have during the back-off (context).
# TYPE fusebox_retries_refused_total counter
fusebox_retries_refused_total{by="budget",supplier="quotes"} 2
fusebox_retries_refused_total{by="context",supplier="quotes"} 0
# HELP fusebox_retries_total Attempts after a first one: the extra calls retries added.
# TYPE fusebox_retries_total counter
fusebox_retries_total{supplier="quotes"} 1
# HELP fusebox_hedges_total Second attempts (hedges) started.
# TYPE fusebox_hedges_total counter
fusebox_hedges_total{supplier="quotes"} 1
# HELP fusebox_hedges_won_total Hedges that answered first with a success.
# TYPE fusebox_hedges_won_total counter
fusebox_hedges_won_total{supplier="quotes"} 1
# HELP fusebox_hedge_delay_seconds The hedging delay in use: the supplier's recent quantile, or the fixed delay.
# TYPE fusebox_hedge_delay_seconds gauge
fusebox_hedge_delay_seconds{supplier="quotes"} 0.01
`
		require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want),
			"fusebox_retry_attempts_total", "fusebox_retries_refused_total", "fusebox_retries_total",
			"fusebox_hedges_total", "fusebox_hedges_won_total", "fusebox_hedge_delay_seconds"))
		require.Equal(t, 11, countSeries(t, reg), "9 metrics, two of them with two values of by")
		problems, err := testutil.CollectAndLint(metrics.NewPolicyCollector(r, h, metrics.Opts{}))
		require.NoError(t, err)
		require.Empty(t, problems)
		empty := prometheus.NewRegistry()
		empty.MustRegister(metrics.NewPolicyCollector(nil, nil, metrics.Opts{}))
		require.Zero(t, countSeries(t, empty), "nil policies: nothing")
	})
}
