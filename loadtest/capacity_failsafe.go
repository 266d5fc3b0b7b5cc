package loadtest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
)

// failsafeLimiter is the comparison's subject: failsafe-go's
// adaptivelimiter with its defaults in front of the same calls, each run
// on a goroutine of its own with a 5 s timeout, as the executor runs
// them. It returns how to submit a call, the limit and the refusals so
// far, and how to wait for the calls still running.
func failsafeLimiter(ctx context.Context) (submit func(func(context.Context) (struct{}, error)), stats func() (int, uint64), wait func() error) {
	lim := adaptivelimiter.NewWithDefaults[any]()
	var refused atomic.Uint64
	var wg sync.WaitGroup
	submit = func(fn func(context.Context) (struct{}, error)) {
		p, ok := lim.TryAcquirePermit()
		if !ok {
			refused.Add(1)
			return
		}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if _, err := fn(cctx); err != nil {
				p.Drop()
				return
			}
			p.Record()
		})
	}
	stats = func() (int, uint64) { return lim.Limit(), refused.Load() }
	wait = func() error { wg.Wait(); return nil }
	return submit, stats, wait
}
