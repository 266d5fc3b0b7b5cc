// Command httpclient shows per-host protection of outgoing HTTP calls with
// fusehttp: two local servers, one of which hangs for a while.
//
//	go run ./examples/httpclient
//
// Ten times a second the program calls both servers through one
// http.Client. The payments server hangs for the first 1.5 seconds: its
// three slots fill up, the fourth request is refused and trips its breaker,
// and from then on payment requests fail fast without touching the network,
// while catalog requests go on being served. After the reset timeout one
// probe goes through, finds payments healthy again, and closes the breaker.
// Transitions are logged with log/slog as they happen; a summary is printed
// every second. The program stops by itself after four seconds.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

const (
	runFor      = 4 * time.Second
	tick        = 100 * time.Millisecond // one request to each server per tick
	hangUntil   = 1500 * time.Millisecond
	callTimeout = 800 * time.Millisecond
)

func main() {
	start := time.Now()

	// Two upstreams on loopback. payments hangs (until the client gives
	// up) during its first 1.5 seconds.
	catalog := serve(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "42 items") })
	payments := serve(func(w http.ResponseWriter, r *http.Request) {
		if time.Since(start) < hangUntil {
			<-r.Context().Done()
			return
		}
		fmt.Fprintln(w, "paid")
	})
	defer catalog.close()
	defer payments.close()

	// One executor per host:port, each with 3 slots, an 800ms timeout for
	// the whole exchange, and a reset timeout longer than that.
	g, err := executor.NewGroup(executor.GroupConfig{
		Default: executor.Config{
			Slots:             3,
			InvocationTimeout: callTimeout,
			Breaker:           breaker.Config{ResetTimeout: 1200 * time.Millisecond},
		},
		OnTransition: executor.LogTransitions(logger(start)),
	})
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())
	tr := &fusehttp.Transport{Group: g}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	fmt.Printf("catalog at %s, payments at %s (hangs for %v)\n", catalog.addr, payments.addr, hangUntil)
	names := map[string]string{catalog.addr: "catalog", payments.addr: "payments"}

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		count = map[string]tally{"catalog": {}, "payments": {}}
	)
	call := func(addr string) {
		defer wg.Done()
		outcome := fetch(client, "http://"+addr+"/")
		mu.Lock()
		count[names[addr]][outcome]++
		mu.Unlock()
	}

	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for i := 1; i <= int(runFor/tick); i++ {
		<-ticker.C
		wg.Add(2)
		go call(catalog.addr)
		go call(payments.addr)
		if i%int(time.Second/tick) == 0 {
			mu.Lock()
			fmt.Printf("second %d: payments: %v | catalog: %v\n", i*int(tick)/int(time.Second), count["payments"], count["catalog"])
			count = map[string]tally{"catalog": {}, "payments": {}}
			mu.Unlock()
		}
	}
	wg.Wait() // every request ends within the invocation timeout

	for _, addr := range []string{payments.addr, catalog.addr} {
		ex, _ := g.Executor(addr)
		st := ex.Stats()
		fmt.Printf("%s: breaker %s, %d ok, %d failed (%d timeouts), refused: %d open, %d busy, %d stuck\n",
			names[addr], st.Breaker.State, st.Successes, st.Failures, st.Timeouts,
			st.Rejected.Open, st.Rejected.Busy, st.Rejected.Saturated)
	}
}

// fetch makes one GET and says how it went.
func fetch(client *http.Client, url string) string {
	resp, err := client.Get(url)
	switch {
	case errors.Is(err, breaker.ErrOpen):
		return "refused (open)" // fail fast: no request was sent
	case errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy):
		return "refused (saturated)" // every slot taken: refused alone if busy, the breaker tripped if stuck
	case errors.Is(err, executor.ErrTimeout):
		return "timed out"
	case err != nil:
		return "failed"
	}
	defer resp.Body.Close() // gives the slot back
	if resp.StatusCode == http.StatusOK {
		return "ok"
	}
	return resp.Status
}

// tally counts the outcomes of one second.
type tally map[string]int

func (t tally) String() string {
	if len(t) == 0 {
		return "nothing finished"
	}
	var parts []string
	for _, o := range slices.Sorted(maps.Keys(t)) {
		parts = append(parts, fmt.Sprintf("%d %s", t[o], o))
	}
	return strings.Join(parts, ", ")
}

// logger logs the breaker transitions with times relative to the start.
func logger(start time.Time) *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Value.Kind() {
			case slog.KindTime:
				a.Value = slog.DurationValue(a.Value.Time().Sub(start).Round(time.Millisecond))
			case slog.KindDuration:
				a.Value = slog.DurationValue(a.Value.Duration().Round(time.Millisecond))
			}
			return a
		},
	}))
}

// server is a local upstream.
type server struct {
	addr string
	srv  *http.Server
}

func serve(h http.HandlerFunc) *server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	s := &server{addr: ln.Addr().String(), srv: &http.Server{Handler: h}}
	go s.srv.Serve(ln)
	return s
}

func (s *server) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
}
