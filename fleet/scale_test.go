package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
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

// The fleet at scale, in virtual time over the modelled link (hub.go):
// N replicas, each with 100 suppliers. "payments" hangs from the start
// (replica i calls it 1 + i%5 times a second), "search" fails from 10 s to
// 20 s and from 30 s to 40 s (2 calls a second on every replica), and the
// 98 others answer at once (4 calls a second in all, in turn). Every
// supplier has 4 slots, a 1 s invocation timeout and a 5 s reset timeout.
// The run lasts one virtual minute with a 2 ms link.
const (
	scaleSuppliers = 100
	scaleRun       = time.Minute
	scaleTimeout   = time.Second
	scaleReset     = 5 * time.Second
	scaleLatency   = 2 * time.Millisecond
)

type scaleResult struct {
	replicas              int
	toAllRefuse           time.Duration // from the first trip of payments until every replica refused it
	parked, probes        int64         // calls that reached payments before every replica refused, after
	cycles                float64       // payments' probe cycles (reset + the probe's timeout) after that
	minProbeGap           time.Duration
	searchProbes          int64         // search's half-open transitions, fleet-wide
	searchBack            time.Duration // the longest wait, after search recovered, until every replica closed it
	incidentCmds          int64         // Redis commands in the first cycle of payments' incident
	incidentMsgs          int64         // messages delivered in it
	cmds, msgs, bytes     int64         // over the run
	calls                 int64         // every call of every replica
	heapPerReplica        uint64
	virtualSecondsElapsed float64
}

func searchDown(at time.Duration) bool {
	return (at >= 10*time.Second && at < 20*time.Second) || (at >= 30*time.Second && at < 40*time.Second)
}

func runScale(t *testing.T, n int) scaleResult {
	h := newHub(scaleLatency)
	start := time.Now()
	since := func() time.Duration { return time.Since(start) }
	var firstTrip, allRefuse atomic.Int64 // ns since start, +1
	var refused atomic.Int64
	var searchProbes atomic.Int64
	var searchClosed atomic.Int64 // replicas whose search breaker is closed
	searchClosed.Store(int64(n))
	var backMu sync.Mutex
	var searchBack, backFrom time.Duration

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	links := make([]*Link, n)
	for i := range links {
		opened := false
		var mu sync.Mutex
		g := executor.GroupConfig{
			Default: executor.Config{Slots: 4, InvocationTimeout: scaleTimeout, Breaker: breaker.Config{ResetTimeout: scaleReset},
				Stuck: executor.StuckConfig{TripOnAnySaturation: true}},
			OnTransition: func(e breaker.Event) {
				switch e.Name {
				case "payments":
					if e.To != breaker.Open {
						return
					}
					firstTrip.CompareAndSwap(0, int64(since())+1)
					mu.Lock()
					first := !opened
					opened = true
					mu.Unlock()
					if first && refused.Add(1) == int64(n) {
						allRefuse.Store(int64(since()) + 1)
					}
				case "search":
					switch {
					case e.To == breaker.HalfOpen:
						searchProbes.Add(1)
					case e.To == breaker.Closed:
						if searchClosed.Add(1) == int64(n) {
							backMu.Lock()
							searchBack = max(searchBack, since()-backFrom)
							backMu.Unlock()
						}
					case e.From == breaker.Closed:
						searchClosed.Add(-1)
					}
				}
			},
		}
		l, err := newLink(virtualConfig(fmt.Sprintf("r%d", i)), g, h)
		require.NoError(t, err)
		links[i] = l
	}
	names := []string{"payments", "search"}
	for i := range scaleSuppliers - 2 {
		names = append(names, fmt.Sprintf("s%02d", i))
	}
	exs := make([][]*executor.Executor, n)
	for i, l := range links {
		for _, name := range names {
			ex, err := l.Group().Executor(name)
			require.NoError(t, err)
			exs[i] = append(exs[i], ex)
		}
	}
	synctest.Wait() // every link subscribed
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	var calls, hung, hungAfter atomic.Int64
	var gapMu sync.Mutex
	var lastProbe time.Time
	minGap := time.Duration(1<<63 - 1)
	payments := func(ctx context.Context) (int, error) {
		hung.Add(1)
		if allRefuse.Load() != 0 {
			hungAfter.Add(1)
			gapMu.Lock()
			if !lastProbe.IsZero() {
				minGap = min(minGap, time.Since(lastProbe))
			}
			lastProbe = time.Now()
			gapMu.Unlock()
		}
		<-ctx.Done()
		return 0, ctx.Err()
	}
	errDown := errors.New("search down")
	search := func(context.Context) (int, error) {
		if searchDown(since()) {
			return 0, errDown
		}
		return 1, nil
	}
	healthy := func(context.Context) (int, error) { return 1, nil }

	done := make(chan struct{})
	var wg sync.WaitGroup
	// Replicas start their traffic at different moments of the first
	// second, as real ones do (in a bubble, equal tickers would tick at
	// the very same instant).
	loop := func(every, offset time.Duration, f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-done:
				return
			case <-time.After(offset):
			}
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
	call := func(ex *executor.Executor, fn func(context.Context) (int, error)) {
		calls.Add(1)
		f, err := executor.Submit(context.Background(), ex, fn)
		if err == nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = f.Await(context.Background())
			}()
		}
	}
	for i := range n {
		offset := time.Duration(i) * 7919 * time.Microsecond % time.Second
		loop(time.Second/time.Duration(1+i%5), offset, func() { call(exs[i][0], payments) })
		loop(time.Second/2, offset, func() { call(exs[i][1], search) })
		k := i
		loop(time.Second/4, offset, func() {
			k = (k + 1) % (scaleSuppliers - 2)
			call(exs[i][2+k], healthy)
		})
	}
	// The counts of the incident's first cycle, and the recoveries of search.
	var incidentCmds, incidentMsgs int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for firstTrip.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		c0, m0 := h.cmds.Load(), h.msgs.Load()
		time.Sleep(scaleReset + scaleTimeout)
		incidentCmds, incidentMsgs = h.cmds.Load()-c0, h.msgs.Load()-m0
	}()
	for _, at := range []time.Duration{20 * time.Second, 40 * time.Second} {
		time.Sleep(at - since())
		backMu.Lock()
		backFrom = at
		backMu.Unlock()
	}
	time.Sleep(scaleRun - since())
	close(done)
	cmds, msgs, bytes := h.cmds.Load(), h.msgs.Load(), h.bytes.Load()
	elapsed := since()
	wg.Wait()
	for _, l := range links {
		require.NoError(t, l.Close(context.Background()))
	}
	require.NotZero(t, allRefuse.Load(), "every replica refused payments")
	res := scaleResult{replicas: n,
		toAllRefuse: time.Duration(allRefuse.Load() - firstTrip.Load()),
		parked:      hung.Load() - hungAfter.Load(), probes: hungAfter.Load(),
		cycles:       float64(elapsed-time.Duration(allRefuse.Load())) / float64(scaleReset+scaleTimeout),
		minProbeGap:  minGap,
		searchProbes: searchProbes.Load(), searchBack: searchBack,
		incidentCmds: incidentCmds, incidentMsgs: incidentMsgs,
		cmds: cmds, msgs: msgs, bytes: bytes, calls: calls.Load(),
		virtualSecondsElapsed: elapsed.Seconds(),
	}
	if after.HeapAlloc > before.HeapAlloc {
		res.heapPerReplica = (after.HeapAlloc - before.HeapAlloc) / uint64(n)
	}
	return res
}

// scaleSizes are the fleet sizes to run: FLEET_SCALE (a comma-separated
// list; make fleet-scale runs 10,100,1000), else 10.
func scaleSizes(t *testing.T) []int {
	v := os.Getenv("FLEET_SCALE")
	if v == "" {
		return []int{10}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		require.NoError(t, err, "FLEET_SCALE")
		require.Positive(t, n, "FLEET_SCALE")
		out = append(out, n)
	}
	return out
}

func TestVirtualFleetAtScale(t *testing.T) {
	var rs []scaleResult
	for _, n := range scaleSizes(t) {
		synctest.Test(t, func(t *testing.T) { rs = append(rs, runScale(t, n)) })
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| %d suppliers a replica, 1 virtual minute, %v link | ", scaleSuppliers, scaleLatency)
	for _, r := range rs {
		fmt.Fprintf(&b, "%d replicas | ", r.replicas)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(rs)) + "\n")
	row := func(name string, f func(r scaleResult) string) {
		fmt.Fprintf(&b, "| %s |", name)
		for _, r := range rs {
			fmt.Fprintf(&b, " %s |", f(r))
		}
		b.WriteString("\n")
	}
	per := func(v int64, r scaleResult) float64 { return float64(v) / r.virtualSecondsElapsed }
	row("hung supplier: from the first trip until every replica refuses", func(r scaleResult) string { return r.toAllRefuse.String() })
	row("hung supplier: calls that reached it until then", func(r scaleResult) string { return fmt.Sprint(r.parked) })
	row("hung supplier: probes per probe cycle afterwards (5 s reset + the probe's 1 s)", func(r scaleResult) string {
		return fmt.Sprintf("%.2f (%d in %.1f)", float64(r.probes)/r.cycles, r.probes, r.cycles)
	})
	row("hung supplier: shortest time between two probes", func(r scaleResult) string { return r.minProbeGap.Round(time.Millisecond).String() })
	row("flapping supplier: probes, fleet-wide, in its two 10 s outages", func(r scaleResult) string { return fmt.Sprint(r.searchProbes) })
	row("flapping supplier: longest wait after it recovered until every replica closed", func(r scaleResult) string { return r.searchBack.Round(time.Millisecond).String() })
	row("Redis commands in the incident's first cycle (6 s), total / per replica", func(r scaleResult) string {
		return fmt.Sprintf("%d / %.1f", r.incidentCmds, float64(r.incidentCmds)/float64(r.replicas))
	})
	row("messages delivered in it, total / per replica", func(r scaleResult) string {
		return fmt.Sprintf("%d / %.1f", r.incidentMsgs, float64(r.incidentMsgs)/float64(r.replicas))
	})
	row("Redis commands a second, total / per replica", func(r scaleResult) string {
		return fmt.Sprintf("%.0f / %.2f", per(r.cmds, r), per(r.cmds, r)/float64(r.replicas))
	})
	row("messages delivered a second, total / per replica", func(r scaleResult) string {
		return fmt.Sprintf("%.0f / %.2f", per(r.msgs, r), per(r.msgs, r)/float64(r.replicas))
	})
	row("bytes delivered a second to each replica", func(r scaleResult) string {
		return fmt.Sprintf("%.0f", per(r.bytes, r)/float64(r.replicas))
	})
	row("calls a second, total (none of them a Redis command)", func(r scaleResult) string { return fmt.Sprintf("%.0f", per(r.calls, r)) })
	row("heap per replica (its group of 100 executors and its link)", func(r scaleResult) string {
		return fmt.Sprintf("%.0f KiB", float64(r.heapPerReplica)/1024)
	})
	t.Log(b.String())
	if out := os.Getenv("FLEET_SCALE_OUT"); out != "" {
		require.NoError(t, os.WriteFile(out, []byte(b.String()), 0o644))
	}

	for _, r := range rs {
		name := fmt.Sprintf("%d replicas", r.replicas)
		assert.LessOrEqual(t, r.toAllRefuse, 50*time.Millisecond, "%s: fleet-wide refusal soon after the first trip", name)
		perCycle := float64(r.probes) / r.cycles
		assert.InDelta(t, 1.0, perCycle, 0.15, "%s: one probe per cycle", name)
		assert.GreaterOrEqual(t, r.minProbeGap, scaleReset, "%s: never two probes in one reset period", name)
		assert.LessOrEqual(t, r.searchProbes, int64(10), "%s: the flapping supplier is probed once per period, fleet-wide", name)
		assert.LessOrEqual(t, r.searchBack, scaleReset+50*time.Millisecond, "%s: every replica closes at the first probe after the flapping supplier recovers", name)
		// Nothing per call: the commands a replica sends are a few per
		// probe cycle of each open supplier and its health checks, far
		// fewer than its calls.
		assert.Less(t, float64(r.cmds)/float64(r.replicas)/r.virtualSecondsElapsed, 3.0, "%s: Redis commands a second per replica", name)
		assert.LessOrEqual(t, r.incidentMsgs, int64(8*r.replicas), "%s: O(replicas) messages per incident", name)
	}
}
