package fleet

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// The fleet scenario in virtual time, at full scale: ten shops of 100
// request workers, payments behind 10 slots with a 30 s invocation
// timeout and a 45 s reset timeout, a payment supplier hung for ten
// minutes. Shop i gets i+1 payments a second (55 in all) and 20 catalog
// requests a second. The shops are linked through an in-process hub that
// delivers each message after a modelled one-way latency; everything else
// is the link's real code. Ten virtual minutes take a few seconds.
const (
	vShops    = 10
	vWorkers  = 100
	vOutage   = 10 * time.Minute
	vTimeout  = 30 * time.Second
	vReset    = 45 * time.Second
	vCatalogs = 20 // a second, per shop
)

type virtualResult struct {
	parked    int64         // calls that reached the hung supplier before every shop refused
	allRefuse time.Duration // until every shop's breaker had opened once
	probes    int64         // calls that reached it afterwards
	cycles    float64       // probe cycles (reset + the failed probe's timeout) from then on
	catalog   float64
}

func (r virtualResult) perCycle() float64 { return float64(r.probes) / r.cycles }

func virtualConfig(name string) Config {
	return Config{Prefix: "virtual", Replica: name, Buffer: DefaultBuffer, OpTimeout: DefaultOpTimeout,
		Margin: DefaultMargin, HealthCheck: DefaultHealthCheck, BackoffMin: DefaultBackoffMin, BackoffMax: DefaultBackoffMax,
		TripRate: DefaultTripRate, TripBurst: DefaultTripBurst, Logger: virtualLogger}
}

var virtualLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

func init() {
	if os.Getenv("FLEET_DEBUG") != "" {
		virtualLogger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}

// runVirtual plays the scenario; h nil means local breakers only.
func runVirtual(t *testing.T, h *hub) virtualResult {
	start := time.Now()
	var opened [vShops]atomic.Int64 // ns since start of the first opening, +1
	var openCount, allOpen atomic.Int64
	groups := make([]*executor.Group, vShops)
	links := make([]*Link, vShops)
	for i := range groups {
		g := executor.GroupConfig{
			// Hung from its first call: no latency history, so the literal
			// rule, as in runScenario.
			Default: executor.Config{Slots: 10, InvocationTimeout: vTimeout, Breaker: breaker.Config{ResetTimeout: vReset},
				Stuck: executor.StuckConfig{TripOnAnySaturation: true}},
			OnTransition: func(e breaker.Event) {
				if e.To == breaker.Open && opened[i].CompareAndSwap(0, int64(time.Since(start))+1) {
					if openCount.Add(1) == vShops {
						allOpen.Store(int64(time.Since(start)))
					}
				}
			},
		}
		if h == nil {
			grp, err := executor.NewGroup(g)
			require.NoError(t, err)
			groups[i] = grp
			continue
		}
		l, err := newLink(virtualConfig(fmt.Sprintf("shop%d", i)), g, h)
		require.NoError(t, err)
		links[i], groups[i] = l, l.Group()
	}
	payments := make([]*executor.Executor, vShops)
	for i, g := range groups {
		ex, err := g.Executor("payments")
		require.NoError(t, err)
		payments[i] = ex
	}
	synctest.Wait() // every link subscribed

	var calls, after atomic.Int64
	hung := func(ctx context.Context) (int, error) {
		calls.Add(1)
		if allOpen.Load() != 0 {
			after.Add(1)
		}
		<-ctx.Done()
		return 0, ctx.Err()
	}
	var served, asked atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	loop := func(every time.Duration, f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					f()
				}
			}
		}()
	}
	for i := range vShops {
		workers := make(chan struct{}, vWorkers)
		loop(time.Second/time.Duration(i+1), func() {
			select {
			case workers <- struct{}{}:
			default:
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = executor.Do(context.Background(), payments[i], hung)
				<-workers
			}()
		})
		loop(time.Second/vCatalogs, func() {
			asked.Add(1)
			select {
			case workers <- struct{}{}:
				served.Add(1)
				<-workers
			default:
			}
		})
	}
	time.Sleep(vOutage)
	close(done)
	wg.Wait()
	for i := range groups {
		if links[i] != nil {
			require.NoError(t, links[i].Close(context.Background()))
		} else {
			require.NoError(t, groups[i].Close(context.Background()))
		}
	}

	res := virtualResult{allRefuse: time.Duration(allOpen.Load()), catalog: float64(served.Load()) / float64(asked.Load())}
	require.Positive(t, res.allRefuse, "every shop refused at some point")
	res.parked = calls.Load() - after.Load()
	res.probes = after.Load()
	res.cycles = float64(vOutage-res.allRefuse) / float64(vReset+vTimeout)
	return res
}

func TestVirtualScenarioLocalVersusFleet(t *testing.T) {
	var local, linked, slow virtualResult
	synctest.Test(t, func(t *testing.T) { local = runVirtual(t, nil) })
	synctest.Test(t, func(t *testing.T) { linked = runVirtual(t, newHub(2*time.Millisecond)) })
	synctest.Test(t, func(t *testing.T) { slow = runVirtual(t, newHub(50*time.Millisecond)) })

	var b strings.Builder
	fmt.Fprintf(&b, "\n| ten shops, payments hung for %v (virtual time) | local breakers only | fleet, 2 ms link | fleet, 50 ms link |\n|---|---|---|---|\n", vOutage)
	row := func(name string, f func(virtualResult) string) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, f(local), f(linked), f(slow))
	}
	row("calls parked on the hung supplier before every shop refused", func(r virtualResult) string { return fmt.Sprint(r.parked) })
	row("time until every shop refuses", func(r virtualResult) string { return r.allRefuse.Round(time.Millisecond).String() })
	row("probes per probe cycle afterwards (45 s reset + the failed probe's 30 s)", func(r virtualResult) string { return fmt.Sprintf("%.1f", r.perCycle()) })
	row("catalog requests served", func(r virtualResult) string { return fmt.Sprintf("%.1f%%", 100*r.catalog) })
	t.Log(b.String())

	assert.Less(t, linked.parked, local.parked)
	assert.Less(t, linked.allRefuse, local.allRefuse)
	assert.LessOrEqual(t, linked.perCycle(), 1.1, "one probe per cycle for the fleet")
	assert.Greater(t, local.perCycle(), 5.0, "every shop probes on its own")
	assert.LessOrEqual(t, slow.perCycle(), 1.1)
}
