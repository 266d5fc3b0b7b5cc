package fleet_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// The fleet scenario, in real time against a real Redis and a payment
// supplier that is a real HTTP server on loopback, scaled down so that it
// runs in seconds: ten shops of 100 request workers share the
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
	probes       int64         // probes after every shop refused
	periods      float64       // probe cycles from then to the end
	catalog      float64       // share of catalog requests served
	paymentsLost int64         // payment requests that found no worker
	perSlice     []int64       // calls that reached the supplier, per 100 ms
}

const scSlice = 100 * time.Millisecond

func (r scenarioResult) probesPerPeriod() float64 {
	if r.periods <= 0 {
		return 0
	}
	return float64(r.probes) / r.periods
}

func runScenario(t *testing.T, srv *server, linked bool) scenarioResult {
	// The supplier hangs from its first call, so the executors have no
	// latency history and their default stuck criterion would wait for
	// half the invocation timeout; the literal rule keeps the scenario
	// about the link (see docs/fleet.md).
	var allOpen atomic.Int64 // ns since start; 0 until every shop refused
	// A probe is a breaker's move to HalfOpen: counted where it happens,
	// not where its request lands, which a loaded machine may delay past
	// the moment every shop refused.
	var probes atomic.Int64
	g := executor.GroupConfig{Default: executor.Config{Slots: 10, InvocationTimeout: scInvocation,
		Breaker: breaker.Config{ResetTimeout: scReset}, Stuck: executor.StuckConfig{TripOnAnySaturation: true}},
		OnTransition: func(e breaker.Event) {
			if e.To == breaker.HalfOpen && allOpen.Load() != 0 {
				probes.Add(1)
			}
		}}
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
		eventually(t, patience, "link up", func() bool { return l.Stats().Up })
		groups[i] = l.Group()
	}
	payments := make([]*executor.Executor, scShops)
	for i, grp := range groups {
		ex, err := grp.Executor("payments")
		require.NoError(t, err)
		payments[i] = ex
	}

	var res scenarioResult
	var calls atomic.Int64
	start := time.Now()
	slices := make([]atomic.Int64, scRun/scSlice+1)
	// The payment supplier is an HTTP server on 127.0.0.1 that hangs: it
	// counts each request that reaches it and answers none.
	supplier := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		slices[min(int(time.Since(start)/scSlice), len(slices)-1)].Add(1)
		<-r.Context().Done()
	}))
	defer supplier.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: scWorkers}}
	defer client.CloseIdleConnections()
	hung := func(ctx context.Context) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, supplier.URL+"/charge", nil)
		if err != nil {
			return 0, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
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
	res.probes = probes.Load()
	res.parked = calls.Load() - res.probes
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
	for i := range slices {
		res.perSlice = append(res.perSlice, slices[i].Load())
	}
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
	if dir := os.Getenv("FLEET_SCENARIO_OUT"); dir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "fleet-scenario.md"), []byte(b.String()), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "fleet-scenario.svg"), chart(local.perSlice, linked.perSlice), 0o644))
	}

	assert.Less(t, linked.parked, local.parked, "the fleet parks fewer calls on the hung supplier")
	require.Positive(t, linked.allRefuse)
	if local.allRefuse > 0 {
		assert.Less(t, linked.allRefuse, local.allRefuse, "the fleet refuses everywhere sooner")
	}
	assert.LessOrEqual(t, linked.probesPerPeriod(), 1.5, "about one probe per period for the fleet")
	assert.Greater(t, local.probesPerPeriod(), 4.0, "every shop probes on its own without the fleet")
}

// chart draws the calls that reached the hung supplier per 100 ms, local
// breakers against the linked fleet, as a small SVG with no dependency.
func chart(local, linked []int64) []byte {
	const w, h, left, bottom = 720, 300, 50, 40
	peak := int64(1)
	for _, v := range append(append([]int64{}, local...), linked...) {
		peak = max(peak, v)
	}
	n := len(local)
	x := func(i int) float64 { return left + float64(i)*float64(w-left-20)/float64(n) }
	y := func(v int64) float64 { return float64(h-bottom) - float64(v)*float64(h-bottom-30)/float64(peak) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="18">Calls reaching the hung payment supplier per 100 ms, ten shops</text>`+"\n", left)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, h-bottom, w-20, h-bottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="30" x2="%d" y2="%d" stroke="black"/>`+"\n", left, left, h-bottom)
	for s := 0; s <= n/10; s++ {
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="middle">%ds</text>`+"\n", x(10*s), h-bottom+16, s)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%.0f" text-anchor="end">%d</text>`+"\n", left-5, y(peak)+4, peak)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">0</text>`+"\n", left-5, h-bottom+4)
	bars := func(vs []int64, offset float64, color string) {
		bw := float64(w-left-20) / float64(n) / 2
		for i, v := range vs {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x(i)+offset*bw, y(v), bw, float64(h-bottom)-y(v), color)
		}
	}
	bars(local, 0, "#d62728")
	bars(linked, 1, "#1f77b4")
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="#d62728"/><text x="%d" y="%d">local breakers only</text>`+"\n", w-220, 32, w-205, 41)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="#1f77b4"/><text x="%d" y="%d">linked fleet</text>`+"\n", w-220, 50, w-205, 59)
	b.WriteString("</svg>\n")
	return []byte(b.String())
}
