package fleet_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fleet"
)

// The fleet scenario, in real time against a real Redis, scaled down so
// that it runs in seconds: ten shops of 100 request workers share the
// payment traffic unevenly (shop i gets 5×(i+1) payments a second, as a
// load balancer with sticky sessions would hand out) and serve catalog
// requests that need a worker and nothing else. The payment supplier hangs
// from the start. Payments have 10 slots, a 1 s invocation timeout and a
// 1.5 s reset timeout. It runs once with local breakers only and once with
// the shops linked.
const (
	scShops      = 10
	scWorkers    = 100
	scRun        = 6 * time.Second
	scInvocation = time.Second
	scReset      = 1500 * time.Millisecond
)

type scenarioResult struct {
	parked       int64         // calls that reached the hung supplier
	allRefuse    time.Duration // until every shop's breaker was open
	probes       int64         // calls that reached it after every shop refused
	periods      float64       // probe cycles from then to the end
	catalog      float64       // share of catalog requests served
	paymentsLost int64         // payment requests that found no worker
}

func (r scenarioResult) probesPerPeriod() float64 {
	if r.periods <= 0 {
		return 0
	}
	return float64(r.probes) / r.periods
}

func runScenario(t *testing.T, srv *server, linked bool) scenarioResult {
	g := executor.GroupConfig{Default: executor.Config{Workers: 10, InvocationTimeout: scInvocation,
		Breaker: breaker.Config{ResetTimeout: scReset}}}
	groups := make([]*executor.Group, scShops)
	for i := range groups {
		if !linked {
			grp, err := executor.NewGroup(g)
			require.NoError(t, err)
			groups[i] = grp
			t.Cleanup(func() { _ = grp.Close(context.Background()) })
			continue
		}
		cfg := linkConfig(srv, t, fmt.Sprintf("shop%d", i))
		cfg.Prefix = "scenario"
		l, err := fleet.New(cfg, g)
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		eventually(t, 3*time.Second, "link up", func() bool { return l.Stats().Up })
		groups[i] = l.Group()
	}
	payments := make([]*executor.Executor, scShops)
	for i, grp := range groups {
		ex, err := grp.Executor("payments")
		require.NoError(t, err)
		payments[i] = ex
	}

	var res scenarioResult
	var calls, afterAll atomic.Int64
	var allOpen atomic.Int64 // ns since start; 0 until every shop refused
	start := time.Now()
	hung := func(ctx context.Context) (int, error) {
		calls.Add(1)
		if allOpen.Load() != 0 {
			afterAll.Add(1)
		}
		<-ctx.Done()
		return 0, ctx.Err()
	}
	var catalogServed, catalogAll, lost atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range scShops {
		workers := make(chan struct{}, scWorkers)
		wg.Add(2)
		go func() { // payments
			defer wg.Done()
			tick := time.NewTicker(time.Second / time.Duration(5*(i+1)))
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				select {
				case workers <- struct{}{}:
				default:
					lost.Add(1)
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _ = executor.Do(context.Background(), payments[i], hung)
					<-workers
				}()
			}
		}()
		go func() { // catalog: 200 a second, served if a worker is free
			defer wg.Done()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				catalogAll.Add(1)
				select {
				case workers <- struct{}{}:
					catalogServed.Add(1)
					<-workers
				default:
				}
			}
		}()
	}
	tick := time.NewTicker(time.Millisecond)
	for time.Since(start) < scRun {
		<-tick.C
		if allOpen.Load() == 0 {
			open := 0
			for _, ex := range payments {
				if ex.Breaker().State() != breaker.Closed {
					open++
				}
			}
			if open == scShops {
				allOpen.Store(int64(time.Since(start)))
			}
		}
	}
	tick.Stop()
	close(done)
	wg.Wait()
	res.parked = calls.Load() - afterAll.Load()
	res.probes = afterAll.Load()
	if at := allOpen.Load(); at != 0 {
		res.allRefuse = time.Duration(at)
		// A probe of a hung supplier fails at its timeout, and the next is
		// due a reset timeout later: one cycle is both.
		res.periods = float64(scRun-res.allRefuse) / float64(scReset+scInvocation)
	} else {
		res.allRefuse = -1
	}
	res.catalog = float64(catalogServed.Load()) / float64(catalogAll.Load())
	res.paymentsLost = lost.Load()
	return res
}

func TestScenarioLocalVersusFleet(t *testing.T) {
	srv := startRedis(t)
	local := runScenario(t, srv, false)
	linked := runScenario(t, srv, true)

	var b strings.Builder
	fmt.Fprintf(&b, "\n| %d shops, hung payments, %v | local breakers only | linked fleet |\n|---|---|---|\n", scShops, scRun)
	row := func(name string, f func(scenarioResult) string) {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, f(local), f(linked))
	}
	row("calls parked on the hung supplier before every shop refused", func(r scenarioResult) string { return fmt.Sprint(r.parked) })
	row("time until every shop refuses", func(r scenarioResult) string {
		if r.allRefuse < 0 {
			return "never"
		}
		return r.allRefuse.Round(time.Millisecond).String()
	})
	row("probes per reset period afterwards (reset timeout + the failed probe's 1 s)", func(r scenarioResult) string { return fmt.Sprintf("%.1f", r.probesPerPeriod()) })
	row("catalog requests served", func(r scenarioResult) string { return fmt.Sprintf("%.1f%%", 100*r.catalog) })
	t.Log(b.String())

	assert.Less(t, linked.parked, local.parked, "the fleet parks fewer calls on the hung supplier")
	require.Positive(t, linked.allRefuse)
	if local.allRefuse > 0 {
		assert.Less(t, linked.allRefuse, local.allRefuse, "the fleet refuses everywhere sooner")
	}
	assert.LessOrEqual(t, linked.probesPerPeriod(), 1.5, "about one probe per period for the fleet")
	assert.Greater(t, local.probesPerPeriod(), 4.0, "every shop probes on its own without the fleet")
}
