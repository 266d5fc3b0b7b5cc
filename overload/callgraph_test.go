package overload

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
)

// The plumbing of the call graph over loopback, with a stub for the
// backend's work: the frontend's route decides the priority, which
// crosses the hop in a header the backend believes from 127.0.0.1; a
// backend that accepts every critical call and 60 % of the sheddable
// ones has the frontend's throttle refuse sheddable calls only.
func TestTheCallGraphCarriesThePriorityAndThrottlesSheddableFirst(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]map[priority.Priority]int{}
	n := 0
	stub := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		route := strings.TrimPrefix(r.URL.Path, "/work/")
		if seen[route] == nil {
			seen[route] = map[priority.Priority]int{}
		}
		seen[route][priority.From(r.Context())]++
		if route == Recs {
			if n++; n%5 < 2 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		}
	})
	bh, releaseBack, err := Backend("fusebox", stub)
	require.NoError(t, err)
	defer releaseBack()
	back := httptest.NewServer(bh)
	defer back.Close()
	fh, releaseFront, err := Frontend("fusebox", back.URL)
	require.NoError(t, err)
	defer releaseFront()
	front := httptest.NewServer(fh)
	defer front.Close()

	c := Client()
	defer c.CloseIdleConnections()
	codes := map[string]map[int]int{Checkout: {}, Recs: {}}
	// 300 calls over 1.2 s: the throttle sets its odds once a bucket of
	// its window (250 ms), from the buckets before.
	tick := time.NewTicker(4 * time.Millisecond)
	defer tick.Stop()
	for i := range 300 {
		<-tick.C
		route := Recs
		if i%10 < 3 {
			route = Checkout
		}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, front.URL+"/"+route, nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		codes[route][resp.StatusCode]++
	}

	mu.Lock()
	assert.Equal(t, map[priority.Priority]int{priority.Critical: 90}, seen[Checkout], "priorities the backend saw on checkout")
	assert.Len(t, seen[Recs], 1, "priorities the backend saw on recs: %v", seen[Recs])
	assert.Positive(t, seen[Recs][priority.Sheddable], "sheddable calls the backend saw")
	mu.Unlock()
	assert.Equal(t, map[int]int{http.StatusOK: 90}, codes[Checkout], "checkout answers at the edge")

	resp, err := c.Get(front.URL + "/admin/stats")
	require.NoError(t, err)
	defer resp.Body.Close()
	var fc FrontCounts
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&fc))
	assert.Equal(t, map[string]uint64{"ok": 90}, fc.Routes[Checkout], "the frontend's checkout calls by outcome")
	crit, shd := fc.Executors["backend-critical"], fc.Executors["backend-sheddable"]
	assert.Equal(t, 60, crit.Slots, "the critical executor's slots")
	assert.Equal(t, 12, shd.Slots, "the sheddable executor's slots")
	assert.Zero(t, crit.Rejected, "critical calls refused by the frontend")
	assert.Positive(t, shd.Rejected.Throttled, "sheddable calls throttled by the frontend")
	assert.Equal(t, shd.Rejected.Throttled, shd.RejectedByPriority[priority.Sheddable], "every refusal a sheddable throttled call")
}

func TestTheCallGraphReportGivesMediansAndSaysWhatWasNotCounted(t *testing.T) {
	cell := func(run int, good int, counted bool) GraphCell {
		return GraphCell{Subject: "fusebox", X: 3, Run: run, C: 100, Counted: counted,
			Backend: BackendCounts{Arrived: uint64(1000 * (run + 1)), Admitted: uint64(500 * (run + 1))},
			Res: Result{Dur: 5 * time.Second, ByClass: map[string]*Tally{
				Checkout: {Sent: 100, Good: good}, Recs: {Sent: 100, Good: 10},
			}}}
	}
	var b strings.Builder
	GraphReport(&b, []GraphCell{cell(0, 90, true), cell(1, 99, false), cell(2, 95, true)})
	// The backend's medians are those of runs 0 and 2: 1 and 3 × C admitted.
	assert.Contains(t, b.String(), "| fusebox | 3 × C | 95.0 % | 10.0 % | 2.00 | 4.00 | 3 |")
	assert.Contains(t, b.String(), "NaN: ")

	b.Reset()
	GraphReport(&b, []GraphCell{cell(0, 90, false)})
	assert.Contains(t, b.String(), "| fusebox | 3 × C | 90.0 % | 10.0 % | NaN | NaN | 1 |")
}

func TestTheCallGraphLossesAddTheRunsUpByOutcome(t *testing.T) {
	cell := func(run int, front string, counted bool) GraphCell {
		return GraphCell{Subject: "fusebox", X: 3, Run: run, C: 100, Counted: counted, Front: json.RawMessage(front),
			Backend: BackendCounts{Conns: uint64(10 * (run + 1))}, CPU: [3]float64{0.5, 0.25 * float64(run), math.NaN()},
			Res: Result{Dur: 5 * time.Second, ByClass: map[string]*Tally{
				Checkout: {Sent: 100, Good: 90, Late: 4, Failed: 1, NotSent: 1},
			}}}
	}
	var b strings.Builder
	GraphLosses(&b, []GraphCell{
		cell(0, `{"Routes":{"checkout":{"ok":90,"refused busy":6,"backend 503":4}}}`, true),
		cell(1, `{"Routes":{"checkout":{"ok":90,"refused open":5,"cancelled":5}}}`, true),
		cell(2, `not json`, false),
	})
	// Connections: the median of runs 0 and 1, the only ones counted.
	assert.Contains(t, b.String(), "| fusebox | 3 × C | 300 | 270 | 0 / 6 / 0 / 5 | 0 | 4 | 0 | 5 | 0 | 18 | 15 | 0.50 / 0.25 / NaN |")
}

func TestProcCPUReadsWhatGetrusageSays(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	end := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(end) {
	}
	self, proc := selfCPU(), procCPU(os.Getpid())
	// /proc counts in ticks of 10 ms; the two reads are a moment apart.
	assert.InDelta(t, self, proc, 0.05, "procCPU %v, getrusage %v", proc, self)
	assert.Positive(t, proc)
	assert.True(t, math.IsNaN(procCPU(-1)), "a process that is not there")
}
