package compare

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fsbudget "github.com/failsafe-go/failsafe-go/budget"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/policy"
)

// The policy comparison: fusebox's Retrier and Hedger (package policy)
// beside failsafe-go's retry and hedge policies, with and without their
// budgets, on the scenarios of the loadtest module: a supplier failing half
// of its calls (a retry storm), one with a slow tail, an overloaded one.

// PolicyCall is one subject's policy around one call of the supplier.
type PolicyCall func(ctx context.Context, supplier func(context.Context) (int, error)) error

// PolicySubject is one library's policy, configured for a scenario.
type PolicySubject struct {
	Name string
	New  func() (call PolicyCall, closeFn func(), err error)
}

// PolicyScenario is steady traffic against a supplier model.
type PolicyScenario struct {
	Name, About string
	Rate        float64 // calls per second, evenly spaced
	Duration    time.Duration
	// Supplier says for each call how long it takes and whether it fails.
	// It is called under a lock.
	Supplier func(rng *rand.Rand) (time.Duration, bool)
	Subjects []PolicySubject
}

// PolicyResult is one subject's run of a scenario.
type PolicyResult struct {
	Name             string
	Calls, Succeeded int64
	Reached          int64 // calls that reached the supplier
	P50, P99         time.Duration
}

// Load is the supplier's calls over the callers'.
func (r PolicyResult) Load() float64 { return float64(r.Reached) / float64(max(r.Calls, 1)) }

// Success is the share of the callers' calls that succeeded.
func (r PolicyResult) Success() float64 { return float64(r.Succeeded) / float64(max(r.Calls, 1)) }

var errPolicySupplier = errors.New("compare: supplier failed")

// policyExecutor is fusebox's executor in the policy scenarios: a breaker
// that half of the calls failing does not trip, as failsafe-go has none
// here; the bulkhead large enough not to refuse.
func policyExecutor() (*executor.Executor, error) {
	return executor.New("supplier", executor.Config{
		Slots: 1000, InvocationTimeout: 2 * time.Second,
		Breaker: breaker.Config{ConsecutiveFailures: 1 << 20, ResetTimeout: 5 * time.Second},
	})
}

// fuseboxPolicy makes a subject from a policy around an executor.
func fuseboxPolicy(name string, around func(ex *executor.Executor) (PolicyCall, error)) PolicySubject {
	return PolicySubject{Name: name, New: func() (PolicyCall, func(), error) {
		ex, err := policyExecutor()
		if err != nil {
			return nil, nil, err
		}
		call, err := around(ex)
		if err != nil {
			return nil, nil, err
		}
		return call, func() { _ = ex.Close(context.Background()) }, nil
	}}
}

func fuseboxRetry(name string, b policy.Budget) PolicySubject {
	return fuseboxPolicy(name, func(ex *executor.Executor) (PolicyCall, error) {
		r, err := policy.NewRetrier(policy.RetryConfig{Seed: 1, Budget: b})
		return func(ctx context.Context, fn func(context.Context) (int, error)) error {
			_, err := policy.Retry(ctx, r, ex, fn)
			return err
		}, err
	})
}

func fuseboxHedge(name string, cfg policy.HedgeConfig) PolicySubject {
	return fuseboxPolicy(name, func(ex *executor.Executor) (PolicyCall, error) {
		h, err := policy.NewHedger(cfg)
		return func(ctx context.Context, fn func(context.Context) (int, error)) error {
			_, err := policy.Hedge(ctx, h, ex, fn)
			return err
		}, err
	})
}

// failsafeSubject runs the call through failsafe-go's policies, with a
// 2 s timeout per attempt inside them.
func failsafePolicy(name string, p func() failsafe.Policy[int]) PolicySubject {
	return PolicySubject{Name: name, New: func() (PolicyCall, func(), error) {
		exec := failsafe.With[int](p(), timeout.New[int](2*time.Second))
		return func(ctx context.Context, fn func(context.Context) (int, error)) error {
			_, err := exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[int]) (int, error) {
				return fn(e.Context())
			})
			return err
		}, func() {}, nil
	}}
}

// failsafeRetry is 3 attempts, back-off 100 ms doubling to 10 s with a
// jitter factor of 0.25 (its upper half, as fusebox's), and the budget if
// maxRate > 0 (failsafe-go's budget bounds the retries in flight at once
// to maxRate of the executions in flight, at least its default of 3).
func failsafeRetry(name string, maxRate float64) PolicySubject {
	return failsafePolicy(name, func() failsafe.Policy[int] {
		b := retrypolicy.NewBuilder[int]().WithMaxAttempts(3).WithBackoff(100*time.Millisecond, 10*time.Second).
			WithJitterFactor(0.25).ReturnLastFailure()
		if maxRate > 0 {
			b = b.WithBudget(fsbudget.NewBuilder().WithMaxRate(maxRate).Build())
		}
		return b.Build()
	})
}

// failsafeHedge hedges after delay (0: its p95, over the last 1000
// executions, from the 20th on), within a budget of maxRate.
func failsafeHedge(name string, delay time.Duration, maxRate float64) PolicySubject {
	return failsafePolicy(name, func() failsafe.Policy[int] {
		var b hedgepolicy.Builder[int]
		if delay > 0 {
			b = hedgepolicy.NewBuilderWithDelay[int](delay)
		} else {
			b = hedgepolicy.NewBuilderWithDelayQuantile[int](0.95, 1000, 20)
		}
		if maxRate > 0 {
			b = b.WithBudget(fsbudget.NewBuilder().WithMaxRate(maxRate).Build())
		}
		return b.Build()
	})
}

// PolicyScenarios returns the three scenarios, each lasting d.
func PolicyScenarios(d time.Duration) []PolicyScenario {
	none := fuseboxPolicy("fusebox, no policy", func(ex *executor.Executor) (PolicyCall, error) {
		return func(ctx context.Context, fn func(context.Context) (int, error)) error {
			_, err := executor.Do(ctx, ex, fn)
			return err
		}, nil
	})
	return []PolicyScenario{{
		Name: "retry storm", About: "50 % of calls fail (10 ms each), 100 calls/s; 3 attempts from a 100 ms back-off",
		Rate: 100, Duration: d,
		Supplier: func(rng *rand.Rand) (time.Duration, bool) { return 10 * time.Millisecond, rng.Float64() < 0.5 },
		Subjects: []PolicySubject{
			none,
			fuseboxRetry("fusebox, no budget", policy.Budget{Unlimited: true}),
			fuseboxRetry("fusebox, budget 10 %", policy.Budget{}),
			failsafeRetry("failsafe-go, no budget", 0),
			failsafeRetry("failsafe-go, budget 10 %", 0.1),
		},
	}, {
		Name: "slow tail", About: "15–25 ms, 2 % of calls take 1 s, 100 calls/s; hedge at the p95",
		Rate: 100, Duration: d,
		Supplier: func(rng *rand.Rand) (time.Duration, bool) {
			if rng.Float64() < 0.02 {
				return time.Second, false
			}
			return 15*time.Millisecond + time.Duration(rng.Int64N(int64(10*time.Millisecond))), false
		},
		Subjects: []PolicySubject{
			none,
			fuseboxHedge("fusebox, budget 5 %", policy.HedgeConfig{}),
			failsafeHedge("failsafe-go, budget 5 %", 0, 0.05),
		},
	}, {
		Name: "overloaded supplier", About: "every call takes 1 s, 100 calls/s; hedge after 50 ms",
		Rate: 100, Duration: d,
		Supplier: func(*rand.Rand) (time.Duration, bool) { return time.Second, false },
		Subjects: []PolicySubject{
			none,
			fuseboxHedge("fusebox, no budget", policy.HedgeConfig{Delay: 50 * time.Millisecond, Budget: policy.Budget{Unlimited: true}}),
			fuseboxHedge("fusebox, budget 5 %", policy.HedgeConfig{Delay: 50 * time.Millisecond}),
			failsafeHedge("failsafe-go, no budget", 50*time.Millisecond, 0),
			failsafeHedge("failsafe-go, budget 5 %", 50*time.Millisecond, 0.05),
		},
	}}
}

// RunPolicy plays sc's traffic through one subject.
func RunPolicy(ctx context.Context, sc PolicyScenario, sub PolicySubject, seed uint64) (PolicyResult, error) {
	res := PolicyResult{Name: sub.Name}
	call, closeFn, err := sub.New()
	if err != nil {
		return res, err
	}
	defer closeFn()
	var (
		mu      sync.Mutex
		rng     = rand.New(rand.NewPCG(seed, seed+1))
		reached atomic.Int64
		ok      atomic.Int64
		lats    []time.Duration
		wg      sync.WaitGroup
		start   = time.Now()
	)
	supplier := func(ctx context.Context) (int, error) {
		reached.Add(1)
		mu.Lock()
		d, fail := sc.Supplier(rng)
		mu.Unlock()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		if fail {
			return 0, errPolicySupplier
		}
		return 1, nil
	}
	n := int64(sc.Rate * sc.Duration.Seconds())
	every := time.Duration(float64(time.Second) / sc.Rate)
	for i := range n {
		if d := time.Duration(i)*every - time.Since(start); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			t0 := time.Now()
			err := call(ctx, supplier)
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
	res.Calls, res.Succeeded, res.Reached = int64(len(lats)), ok.Load(), reached.Load()
	slices.Sort(lats)
	res.P50, res.P99 = nearestRank(lats, 0.50), nearestRank(lats, 0.99)
	return res, ctx.Err()
}

func nearestRank(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
