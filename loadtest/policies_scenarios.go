package loadtest

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/fusebox-go/fusebox/policy"
)

// RunRetryStorm plays a supplier that fails half of its calls (10 ms
// each) for a minute under steady traffic of 100 calls/s, without retries,
// with naive retries (3 attempts, no budget) and with the default budget.
func RunRetryStorm(ctx context.Context, cfg PolicyConfig) (*PolicyReport, error) {
	cfg = cfg.or(PolicyConfig{Rate: 100, Duration: time.Minute, Slots: 20, Seed: 1})
	rep := &PolicyReport{Scenario: "retry storm", About: "a supplier failing 50 % of its calls (10 ms each) for a minute, 100 calls/s", Config: cfg}
	sup := func(rng *rand.Rand, _ int64, _ time.Duration) (time.Duration, bool) {
		return 10 * time.Millisecond, rng.Float64() < 0.5
	}
	return playPolicies(ctx, rep, policyExecutor(cfg.Slots, time.Second), sup, []policyCase{
		{PolicyNone, noPolicy},
		{PolicyNaiveRetry, retrying(policy.Budget{Unlimited: true}, false)},
		{PolicyRetry, retrying(policy.Budget{}, false)},
	})
}

// RunRetryHung plays a supplier that answers in 10 ms for 10 s and then
// hangs for 50 s (it honours cancellation), 100 calls/s, 2 s invocation
// timeout, idempotent calls (so that timeouts and full bulkheads are
// retried too): the stuck bulkhead trips the breaker, which refuses the
// retries.
func RunRetryHung(ctx context.Context, cfg PolicyConfig) (*PolicyReport, error) {
	cfg = cfg.or(PolicyConfig{Rate: 100, Duration: time.Minute, Slots: 10, Seed: 1})
	rep := &PolicyReport{Scenario: "hung supplier", About: "a supplier that hangs after 10 s, 100 calls/s, idempotent calls, 2 s timeout", Config: cfg}
	sup := func(_ *rand.Rand, _ int64, t time.Duration) (time.Duration, bool) {
		if t >= 10*time.Second {
			return -1, false
		}
		return 10 * time.Millisecond, false
	}
	return playPolicies(ctx, rep, policyExecutor(cfg.Slots, 2*time.Second), sup, []policyCase{
		{PolicyNone, noPolicy},
		{PolicyNaiveRetry, retrying(policy.Budget{Unlimited: true}, true)},
		{PolicyRetry, retrying(policy.Budget{}, true)},
	})
}

// tailLatency is the hedging supplier: 15–25 ms (median 20 ms), and 2 % of
// the calls take 1 s.
func tailLatency(rng *rand.Rand, _ int64, _ time.Duration) (time.Duration, bool) {
	if rng.Float64() < 0.02 {
		return time.Second, false
	}
	return 15*time.Millisecond + time.Duration(rng.Int64N(int64(10*time.Millisecond))), false
}

// RunHedgeTail plays the supplier with a slow tail (tailLatency), 100
// calls/s for a minute, without hedging and hedged at the p95.
func RunHedgeTail(ctx context.Context, cfg PolicyConfig) (*PolicyReport, error) {
	cfg = cfg.or(PolicyConfig{Rate: 100, Duration: time.Minute, Slots: 50, Seed: 1})
	rep := &PolicyReport{Scenario: "slow tail", About: "median 20 ms, 2 % of calls take 1 s, 100 calls/s", Config: cfg}
	return playPolicies(ctx, rep, policyExecutor(cfg.Slots, 2*time.Second), tailLatency, []policyCase{
		{PolicyNone, noPolicy},
		{PolicyHedgeP95, hedging(policy.HedgeConfig{})},
	})
}

// RunHedgeOverload plays an overloaded supplier: every call takes 1 s. A
// hedge at 50 ms (the p95 it had while healthy) would double its load;
// the budget stops the hedges at 5 %.
func RunHedgeOverload(ctx context.Context, cfg PolicyConfig) (*PolicyReport, error) {
	cfg = cfg.or(PolicyConfig{Rate: 100, Duration: time.Minute, Slots: 400, Seed: 1})
	rep := &PolicyReport{Scenario: "overloaded supplier", About: "every call takes 1 s, 100 calls/s, hedges after 50 ms", Config: cfg}
	slow := func(*rand.Rand, int64, time.Duration) (time.Duration, bool) { return time.Second, false }
	return playPolicies(ctx, rep, policyExecutor(cfg.Slots, 2*time.Second), slow, []policyCase{
		{PolicyNone, noPolicy},
		{PolicyHedgeFixed, hedging(policy.HedgeConfig{Delay: 50 * time.Millisecond, Budget: policy.Budget{Unlimited: true}})},
		{PolicyHedgeBound, hedging(policy.HedgeConfig{Delay: 50 * time.Millisecond})},
	})
}

// RunPolicies plays the four policy scenarios with their defaults.
func RunPolicies(ctx context.Context) ([]*PolicyReport, error) {
	var out []*PolicyReport
	for _, run := range []func(context.Context, PolicyConfig) (*PolicyReport, error){RunRetryStorm, RunRetryHung, RunHedgeTail, RunHedgeOverload} {
		rep, err := run(ctx, PolicyConfig{})
		if err != nil {
			return nil, err
		}
		out = append(out, rep)
	}
	return out, nil
}
