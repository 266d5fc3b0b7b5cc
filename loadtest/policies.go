package loadtest

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/policy"
)

// The policy scenarios play steady traffic against one supplier and a
// policy around its executor (package policy): retries with and without a
// budget against a supplier that fails or hangs, hedged calls against a
// supplier with a slow tail or an overloaded one. They use the real clock
// and goroutines only: under testing/synctest a minute of traffic runs in
// well under a second, with exact timings.

// PolicyConfig is the traffic of a policy scenario. The zero value of a
// field takes the scenario's default (DefaultRetryStorm and the others).
type PolicyConfig struct {
	Rate     float64       // callers' calls per second, evenly spaced
	Duration time.Duration // how long the callers call
	Slots    int           // the supplier's bulkhead
	Seed     uint64        // the supplier's randomness and the policies' jitter
}

// PolicyRun is the outcome of one policy on one scenario.
type PolicyRun struct {
	Name      string
	Calls     int64   // the callers' calls
	Succeeded int64   // of them, those that succeeded
	Reached   int64   // calls that reached the supplier (attempts, hedges)
	Load      float64 // Reached / Calls: the supplier's load over the callers'
	// The callers' latencies, successes and failures alike.
	P50, P99 time.Duration
	// From the policy's Stats.
	Retries, Hedges, HedgesWon, BudgetRefused uint64
	Delay                                     time.Duration // the hedging delay at the end
}

// Success is the share of the callers' calls that succeeded.
func (r PolicyRun) Success() float64 { return float64(r.Succeeded) / float64(max(r.Calls, 1)) }

// Extra is the share of calls the policy added: Load − 1.
func (r PolicyRun) Extra() float64 { return r.Load - 1 }

// PolicyReport is one scenario played with several policies, on identical
// traffic and the same supplier model.
type PolicyReport struct {
	Scenario string
	About    string
	Config   PolicyConfig
	Runs     []PolicyRun
}

// Run returns the run of the named policy, and whether there is one.
func (r *PolicyReport) Run(name string) (PolicyRun, bool) {
	i := slices.IndexFunc(r.Runs, func(p PolicyRun) bool { return p.Name == name })
	if i < 0 {
		return PolicyRun{}, false
	}
	return r.Runs[i], true
}

// The names of the policies the scenarios play.
const (
	PolicyNone       = "no policy"
	PolicyNaiveRetry = "3 attempts, no budget"
	PolicyRetry      = "3 attempts, budget 10 %"
	PolicyHedgeP95   = "hedge at p95, budget 5 %"
	PolicyHedgeFixed = "hedge at 50 ms, no budget"
	PolicyHedgeBound = "hedge at 50 ms, budget 5 %"
)

// policyFn is a policy around one call of the supplier.
type policyFn func(ctx context.Context, ex *executor.Executor, call func(context.Context) (struct{}, error)) error

// stats reads the counts a policy kept.
type policyStats func(run *PolicyRun)

// policyCase is one policy of a scenario: made fresh for each run.
type policyCase struct {
	name string
	make func(seed uint64) (policyFn, policyStats, error)
}

func noPolicy(uint64) (policyFn, policyStats, error) {
	return func(ctx context.Context, ex *executor.Executor, call func(context.Context) (struct{}, error)) error {
		_, err := executor.Do(ctx, ex, call)
		return err
	}, func(*PolicyRun) {}, nil
}

// retrying is a Retrier with 3 attempts from 100 ms, within b; idempotent
// calls are retried after timeouts and full bulkheads too.
func retrying(b policy.Budget, idempotent bool) func(uint64) (policyFn, policyStats, error) {
	return func(seed uint64) (policyFn, policyStats, error) {
		r, err := policy.NewRetrier(policy.RetryConfig{Seed: seed + 1, Budget: b})
		if err != nil {
			return nil, nil, err
		}
		call := policy.Retry[struct{}]
		if idempotent {
			call = policy.RetryIdempotent[struct{}]
		}
		return func(ctx context.Context, ex *executor.Executor, fn func(context.Context) (struct{}, error)) error {
				_, err := call(ctx, r, ex, fn)
				return err
			}, func(run *PolicyRun) {
				for _, s := range r.Stats() {
					run.Retries, run.BudgetRefused = s.Retries, s.BudgetRefused
				}
			}, nil
	}
}

// hedging is a Hedger with cfg.
func hedging(cfg policy.HedgeConfig) func(uint64) (policyFn, policyStats, error) {
	return func(uint64) (policyFn, policyStats, error) {
		h, err := policy.NewHedger(cfg)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, ex *executor.Executor, fn func(context.Context) (struct{}, error)) error {
				_, err := policy.Hedge(ctx, h, ex, fn)
				return err
			}, func(run *PolicyRun) {
				for _, s := range h.Stats() {
					run.Hedges, run.HedgesWon, run.BudgetRefused, run.Delay = s.Hedges, s.Won, s.BudgetRefused, s.Delay
				}
			}, nil
	}
}

// policySupplier is a supplier model: answer says, for the n-th call
// (from 1) arriving at t since the start, how long it takes and whether it
// fails; a negative duration hangs until the call's context ends. It is
// called under a lock, so it may use rng freely.
type policySupplier func(rng *rand.Rand, n int64, t time.Duration) (time.Duration, bool)

var errPolicySupplier = errors.New("loadtest: supplier failed")

// runPolicy plays cfg's traffic through pc against sup on an executor made
// from ecfg and returns the run.
func runPolicy(ctx context.Context, cfg PolicyConfig, ecfg executor.Config, sup policySupplier, pc policyCase) (PolicyRun, error) {
	run := PolicyRun{Name: pc.name}
	do, stats, err := pc.make(cfg.Seed)
	if err != nil {
		return run, err
	}
	ex, err := executor.New("supplier", ecfg)
	if err != nil {
		return run, err
	}
	var (
		mu      sync.Mutex
		rng     = rand.New(rand.NewPCG(cfg.Seed, cfg.Seed+1))
		reached atomic.Int64
		start   = time.Now()
		lats    []time.Duration
		ok      atomic.Int64
		wg      sync.WaitGroup
	)
	call := func(ctx context.Context) (struct{}, error) {
		n := reached.Add(1)
		mu.Lock()
		d, fail := sup(rng, n, time.Since(start))
		mu.Unlock()
		if d < 0 {
			<-ctx.Done()
			return struct{}{}, ctx.Err()
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return struct{}{}, ctx.Err()
		}
		if fail {
			return struct{}{}, errPolicySupplier
		}
		return struct{}{}, nil
	}
	calls := int64(cfg.Rate * cfg.Duration.Seconds())
	every := time.Duration(float64(time.Second) / cfg.Rate)
	for i := range calls {
		if d := time.Duration(i)*every - time.Since(start); d > 0 {
			if sleep(ctx, d) != nil {
				break
			}
		}
		wg.Go(func() {
			t0 := time.Now()
			err := do(ctx, ex, call)
			lat := time.Since(t0)
			if err == nil {
				ok.Add(1)
			}
			mu.Lock()
			lats = append(lats, lat)
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := ex.Close(ctx); err != nil {
		return run, err
	}
	run.Calls, run.Succeeded, run.Reached = int64(len(lats)), ok.Load(), reached.Load()
	run.Load = float64(run.Reached) / float64(max(run.Calls, 1))
	slices.Sort(lats)
	run.P50, run.P99 = nearestRank(lats, 0.50), nearestRank(lats, 0.99)
	stats(&run)
	return run, ctx.Err()
}

// nearestRank returns the q-quantile of sorted durations (nearest rank).
func nearestRank(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// policyExecutor is the supplier's executor in the policy scenarios: a
// breaker that a supplier failing half of its calls does not trip (the
// scenarios measure the policies, not the breaker), which the stuck
// bulkhead of a hung supplier trips.
func policyExecutor(workers int, timeout time.Duration) executor.Config {
	return executor.Config{
		Slots: workers, InvocationTimeout: timeout,
		Breaker: breaker.Config{ConsecutiveFailures: 1000, ResetTimeout: 2*timeout + time.Second},
	}
}

// playPolicies runs every case on identical traffic, one after the other.
func playPolicies(ctx context.Context, rep *PolicyReport, ecfg executor.Config, sup policySupplier, cases []policyCase) (*PolicyReport, error) {
	for _, pc := range cases {
		run, err := runPolicy(ctx, rep.Config, ecfg, sup, pc)
		if err != nil {
			return nil, err
		}
		rep.Runs = append(rep.Runs, run)
	}
	return rep, nil
}

func (c PolicyConfig) or(def PolicyConfig) PolicyConfig {
	if c.Rate == 0 {
		c.Rate = def.Rate
	}
	if c.Duration == 0 {
		c.Duration = def.Duration
	}
	if c.Slots == 0 {
		c.Slots = def.Slots
	}
	if c.Seed == 0 {
		c.Seed = def.Seed
	}
	return c
}
