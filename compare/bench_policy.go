package compare

import (
	"context"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/policy"
)

// ---- 4. A retry or hedge policy around a trivial call.
//
// The call succeeds at once, so neither policy does anything but its
// bookkeeping: no retry, no hedge (the hedge delay is 1 s). fusebox is
// executor.Do alone, failsafe-go a timeout alone; the -retry and -hedge
// subjects add the policy, so the difference to their own base is the
// policy's overhead per call.

// policyBench runs call serially and in parallel.
func policyBench(lib string, open func(b *testing.B) (func(ctx context.Context) error, func())) []Case {
	body := func(b *testing.B, parallel bool) {
		call, done := open(b)
		defer done()
		ctx := context.Background()
		b.ReportAllocs()
		if !parallel {
			for b.Loop() {
				if err := call(ctx); err != nil {
					fail(b, err)
				}
			}
			return
		}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := call(ctx); err != nil {
					fail(b, err)
				}
			}
		})
	}
	return both("Policy", lib, func(b *testing.B) { body(b, false) }, func(b *testing.B) { body(b, true) })
}

// fuseboxBench opens an executor of BenchSettings and a call around it.
func fuseboxBench(around func(ex *executor.Executor) func(ctx context.Context) error) func(b *testing.B) (func(ctx context.Context) error, func()) {
	return func(b *testing.B) (func(ctx context.Context) error, func()) {
		sub, err := newFusebox(BenchSettings)
		if err != nil {
			fail(b, err)
		}
		ex := sub.(fuseboxSubject).ex
		return around(ex), func() { _ = ex.Close(context.Background()) }
	}
}

func failsafeBench(p ...failsafe.Policy[int]) func(b *testing.B) (func(ctx context.Context) error, func()) {
	return func(b *testing.B) (func(ctx context.Context) error, func()) {
		exec := failsafe.With[int](append(p, timeout.New[int](BenchSettings.Timeout))...)
		return func(ctx context.Context) error {
			_, err := exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[int]) (int, error) { return okCtx(e.Context()) })
			return err
		}, func() {}
	}
}

func policyCases() []Case {
	retrier, _ := policy.NewRetrier(policy.RetryConfig{})
	hedger, _ := policy.NewHedger(policy.HedgeConfig{Delay: time.Second})
	var cs []Case
	cs = append(cs, policyBench("fusebox", fuseboxBench(func(ex *executor.Executor) func(ctx context.Context) error {
		return func(ctx context.Context) error { _, err := executor.Do(ctx, ex, okCtx); return err }
	}))...)
	cs = append(cs, policyBench("fusebox-retry", fuseboxBench(func(ex *executor.Executor) func(ctx context.Context) error {
		return func(ctx context.Context) error { _, err := policy.Retry(ctx, retrier, ex, okCtx); return err }
	}))...)
	cs = append(cs, policyBench("fusebox-hedge", fuseboxBench(func(ex *executor.Executor) func(ctx context.Context) error {
		return func(ctx context.Context) error { _, err := policy.Hedge(ctx, hedger, ex, okCtx); return err }
	}))...)
	cs = append(cs, policyBench("failsafe-go", failsafeBench())...)
	cs = append(cs, policyBench("failsafe-go-retry", failsafeBench(retrypolicy.NewBuilder[int]().WithMaxAttempts(3).WithBackoff(100*time.Millisecond, 10*time.Second).Build()))...)
	cs = append(cs, policyBench("failsafe-go-hedge", failsafeBench(hedgepolicy.NewWithDelay[int](time.Second)))...)
	return cs
}
