// Command metrics serves the Prometheus metrics of a fusebox Group on
// loopback while it drives some traffic, then prints what a scrape shows.
//
//	cd examples/metrics && go run .
//
// Three simulated suppliers: inventory answers in 5ms; pricing starts
// failing after half a second, so its breaker opens on consecutive
// failures; payments hangs, so its bulkhead fills up and its breaker opens
// on saturation. The program serves /metrics on 127.0.0.1 for three seconds
// (curl it meanwhile), scrapes it itself, prints the non-zero fusebox
// series, and stops.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/metrics"
)

const (
	traffic = 2 * time.Second       // how long calls are made
	serve   = 3 * time.Second       // how long /metrics is served
	every   = 50 * time.Millisecond // one call to each supplier per tick
)

func main() {
	start := time.Now()
	g, err := executor.NewGroup(executor.GroupConfig{
		Default: executor.Config{
			Slots:             4,
			InvocationTimeout: 300 * time.Millisecond,
			Breaker:           breaker.Config{ConsecutiveFailures: 3, ResetTimeout: 5 * time.Second},
		},
	})
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())

	// The collector reads the executors' stats at each scrape.
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(g, metrics.Opts{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	go srv.Serve(ln)
	url := "http://" + ln.Addr().String() + "/metrics"
	fmt.Printf("serving %s for %v\n", url, serve)

	suppliers := map[string]func(ctx context.Context) (string, error){
		"inventory": func(ctx context.Context) (string, error) { return after(ctx, 5*time.Millisecond, nil) },
		"pricing": func(ctx context.Context) (string, error) {
			if time.Since(start) > traffic/4 {
				return after(ctx, time.Millisecond, errors.New("pricing: 500"))
			}
			return after(ctx, time.Millisecond, nil)
		},
		"payments": func(ctx context.Context) (string, error) { return after(ctx, time.Hour, nil) }, // hangs
	}

	var wg sync.WaitGroup
	ticker := time.NewTicker(every)
	for range int(traffic / every) {
		<-ticker.C
		for name, fn := range suppliers {
			ex, err := g.Executor(name)
			if err != nil {
				panic(err)
			}
			wg.Go(func() { executor.Do(context.Background(), ex, fn) })
		}
	}
	ticker.Stop()
	wg.Wait() // every call ends within its 300ms invocation timeout

	if err := printScrape(url); err != nil {
		fmt.Println("scrape failed:", err)
	}
	time.Sleep(time.Until(start.Add(serve))) // keep serving for anyone curling it
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}

// after answers err after d, or the context's error if it ends first.
func after(ctx context.Context, d time.Duration, err error) (string, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return "ok", err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// printScrape fetches url and prints the fusebox series that are not 0.
func printScrape(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	fmt.Println("a scrape, without its zero-valued series and comments:")
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "fusebox_") && !strings.HasSuffix(line, " 0") {
			fmt.Println("  " + line)
		}
	}
	return sc.Err()
}
