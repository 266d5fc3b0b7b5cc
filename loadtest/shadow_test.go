package loadtest

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// replay is an enforcing fusebox run fed exactly the payments that
// reached the executor of another run, at the same scenario times, against
// the same supplier: the enforce run of the same traffic.
type replay struct {
	opened   []time.Duration // scenario times of the transitions into open
	refusals executor.Rejections
}

func runReplay(t *testing.T, cfg ExhaustionConfig, arrivals []time.Duration) replay {
	t.Helper()
	var r replay
	synctest.Test(t, func(t *testing.T) {
		clk := newClock(1)
		sup := &supplier{clk: clk, latency: cfg.SupplierLatency, outageStart: cfg.OutageStart, outageEnd: cfg.OutageEnd}
		var mu sync.Mutex
		prot, err := newProtection(ModeFusebox, cfg, clk, sup.charge, func(ev breaker.Event) {
			if ev.To == breaker.Open {
				mu.Lock()
				r.opened = append(r.opened, clk.at(ev.Time))
				mu.Unlock()
			}
		})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for _, at := range arrivals {
			require.True(t, clk.sleepUntil(ctx, at))
			wg.Go(func() { prot.pay(ctx) })
		}
		require.True(t, clk.sleepUntil(ctx, cfg.Duration))
		r.refusals = prot.refusals()
		cancel()
		wg.Wait()
		require.NoError(t, prot.close(context.Background()))
	})
	return r
}

func total(r executor.Rejections) uint64 { return r.Open + r.Saturated + r.QueueFull + r.Busy }

// The seed outage in shadow mode: nothing is refused and the workers run
// out as with a timeout alone, while the shadow breaker opens when the
// enforcing one does and counts what it would have refused: the same
// number, within 1 %, as an enforcing executor refuses on the same traffic.
func TestShadowModeReportsWhatEnforceModeWouldDo(t *testing.T) {
	t.Parallel()
	cfg := virtualConfig()
	var mu sync.Mutex
	var arrivals []time.Duration
	shadowCfg := cfg
	shadowCfg.onPayment = func(at time.Duration) {
		mu.Lock()
		arrivals = append(arrivals, at)
		mu.Unlock()
	}
	rep := runVirtual(t, shadowCfg, ModeShadow, ModeTimeout)
	shadow, timeout := rep.Modes[0].Summary, rep.Modes[1].Summary
	enforced := runVirtual(t, cfg, ModeFusebox).Modes[0].Summary

	t.Run("nothing is refused, and the workers run out as without fusebox", func(t *testing.T) {
		assert.Zero(t, shadow.Payments.FailedFast+shadow.Payments.Busy, "no payment refused by the executor")
		assert.InDelta(t, secsOf(t, timeout.ExhaustedAfter, "exhaustion"), secsOf(t, shadow.ExhaustedAfter, "exhaustion"), 0.1)
		assert.Equal(t, timeout.MaxBusy, shadow.MaxBusy)
		assert.Nil(t, enforced.ExhaustedAfter, "enforced, the workers never run out")
	})

	t.Run("the shadow breaker opens when the enforcing one does", func(t *testing.T) {
		assert.InDelta(t, secsOf(t, enforced.OpenedAfter, "opening"), secsOf(t, shadow.OpenedAfter, "shadow opening"), 0.1)
		assert.Equal(t, "saturation", shadow.OpenedBy)
	})

	t.Run("what it would have refused is what enforce refuses on the same traffic", func(t *testing.T) {
		require.NotNil(t, shadow.Refusals)
		would := *shadow.Refusals
		rp := runReplay(t, cfg, arrivals)
		assert.Len(t, arrivals, shadow.Payments.Offered-shadow.Payments.Refused, "every payment the shop took reached the executor")
		require.NotEmpty(t, rp.opened)
		var shadowOpened []float64
		for _, tr := range rep.Modes[0].Transitions {
			if tr.To == "open" {
				shadowOpened = append(shadowOpened, tr.At)
			}
		}
		require.Len(t, shadowOpened, len(rp.opened), "as many openings")
		for i, at := range rp.opened {
			assert.InDelta(t, at.Seconds(), shadowOpened[i], 0.1, "opening %d", i)
		}
		assert.InEpsilon(t, float64(total(rp.refusals)), float64(total(would)), 0.01,
			"would refuse %+v, enforce refused %+v", would, rp.refusals)
		t.Logf("shadow would refuse %+v; enforce, same traffic, refused %+v; enforce, all payments, refused %+v; "+
			"openings %v (shadow) %v (enforce, same traffic); exhausted after %.1f s (shadow) %.1f s (timeout)",
			would, rp.refusals, *enforced.Refusals, shadowOpened, rp.opened, *shadow.ExhaustedAfter, *timeout.ExhaustedAfter)
	})
}
