package loadtest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
	"github.com/fusebox-go/fusebox/priority"
)

// This file is the engine of the inbound scenarios (RunInbound,
// RunPriorities): a service with a fixed number of request workers and a
// few routes, each route's handler working for a time that may change
// over the run, and a load generator that sends each route's requests at
// a steady rate, each with a client timeout. With fusebox, every route's
// handler is wrapped in inbound.Handler, on an executor of its own.
//
// The service behaves like a thread-per-request server: a request waits
// for a free worker in the accept queue whether or not its client is still
// there, and a handler's supplier call has a deadline of its own (the
// supplier's answer time bounds it), not the client's: a client that
// gives up frees nothing. That is how every worker ends up waiting on a
// slow supplier.

// routeSpec is one route of the service and its traffic.
type routeSpec struct {
	path string                               // "/search"
	rate float64                              // requests per second, evenly spaced
	work func(at time.Duration) time.Duration // the handler's work for a request that starts at scenario time at
	mix  []priority.Priority                  // cycled over the requests; nil: all Default
	exec executor.Config                      // its executor, with fusebox
}

func (r routeSpec) pattern() string { return "GET " + r.path }

// serviceSpec is one run of a scenario.
type serviceSpec struct {
	workers       int
	routes        []routeSpec
	fusebox       bool
	clientTimeout time.Duration
	duration      time.Duration
	healthyUntil  time.Duration // requests sent before it give the healthy latency
	transport     Transport
	speed         float64
}

// Result kinds of one request.
const (
	resServed   = iota // 200
	resShed            // 503
	resTimedOut        // the client gave up
	resOther
	numResults
)

// routeAcc accumulates one route's requests.
type routeAcc struct {
	byPriority  [priority.Levels][numResults]int
	retryAfter  int // shed requests whose answer had a Retry-After
	healthy     []time.Duration
	loaded      []time.Duration // served after healthyUntil
	secs        [][numResults]int
	firstOpenAt time.Duration
	opened      bool
	openReason  breaker.Reason
}

// engine runs one serviceSpec.
type engine struct {
	spec  serviceSpec
	clk   clock
	mu    sync.Mutex
	acc   []routeAcc
	busy  []int // the service's busy workers, the most in each second
	sem   chan struct{}
	index map[string]int // route pattern → index

	runCtx context.Context // ends with the run: the server side's own context
	wg     sync.WaitGroup  // every goroutine of the run
}

func (e *engine) wall(d time.Duration) time.Duration { return e.clk.wall(d) }

// scaled returns the executor config of a route in wall time.
func (e *engine) scaled(c executor.Config) executor.Config {
	c.InvocationTimeout = e.wall(c.InvocationTimeout)
	c.Breaker.ResetTimeout = e.wall(c.Breaker.ResetTimeout)
	return c
}

// run plays the traffic and returns what each route saw.
func (e *engine) run(ctx context.Context) error {
	e.clk = newClock(e.spec.speed)
	n := int((e.spec.duration + time.Second - 1) / time.Second)
	e.acc = make([]routeAcc, len(e.spec.routes))
	e.index = map[string]int{}
	for i := range e.acc {
		e.acc[i].secs = make([][numResults]int, n)
		e.index[e.spec.routes[i].pattern()] = i
	}
	e.busy = make([]int, n)
	e.sem = make(chan struct{}, e.spec.workers)

	var g *executor.Group
	if e.spec.fusebox {
		deps := map[string]executor.Config{}
		for _, r := range e.spec.routes {
			deps[r.pattern()] = e.scaled(r.exec)
		}
		var err error
		g, err = executor.NewGroup(executor.GroupConfig{Suppliers: deps, OnTransition: e.transition})
		if err != nil {
			return err
		}
		defer g.Close(context.Background())
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	e.runCtx = runCtx
	h := e.service(g)
	send := e.inProcess(h)
	if e.spec.transport == HTTP {
		url, client, done, err := overHTTP(h)
		if err != nil {
			return err
		}
		defer done()
		send = e.overHTTP(client, url)
	}
	for i, r := range e.spec.routes {
		e.wg.Go(func() { e.generate(runCtx, i, r, send) })
	}
	e.wg.Go(func() { e.sample(runCtx) })
	e.clk.sleep(ctx, e.spec.duration)
	cancel()
	e.wg.Wait()
	return ctx.Err()
}

// transition notes when a route's breaker first opened.
func (e *engine) transition(ev breaker.Event) {
	if ev.To != breaker.Open {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if i, ok := e.index[ev.Name]; ok && !e.acc[i].opened {
		e.acc[i].opened, e.acc[i].firstOpenAt, e.acc[i].openReason = true, e.clk.now(), ev.Reason
	}
}

// service is the service under test: a pool of workers in front of a mux.
func (e *engine) service(g *executor.Group) http.Handler {
	mux := http.NewServeMux()
	for _, r := range e.spec.routes {
		var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if e.clk.sleep(e.runCtx, r.work(e.clk.now())) {
				w.WriteHeader(http.StatusOK)
			}
		})
		if g != nil {
			h = inbound.Handler(h, inbound.Config{Group: g})
		}
		mux.Handle(r.pattern(), h)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case e.sem <- struct{}{}:
		case <-e.runCtx.Done():
			return
		}
		defer func() { <-e.sem }()
		if p, err := priority.Parse(req.Header.Get("Priority")); err == nil && p != priority.Default {
			req = req.WithContext(priority.With(req.Context(), p))
		}
		mux.ServeHTTP(w, req)
	})
}

// sender sends one request and returns its result and whether a refusal
// carried a Retry-After.
type sender func(ctx context.Context, path string, p priority.Priority) (int, bool)

// codeWriter keeps the status an in-process handler wrote.
type codeWriter struct {
	h    http.Header
	code int
}

func (w *codeWriter) Header() http.Header { return w.h }
func (w *codeWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return len(p), nil
}
func (w *codeWriter) WriteHeader(c int) {
	if w.code == 0 {
		w.code = c
	}
}

func (e *engine) inProcess(h http.Handler) sender {
	return func(ctx context.Context, path string, p priority.Priority) (int, bool) {
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
		req.Header.Set("Priority", p.String())
		w := &codeWriter{h: http.Header{}}
		done := make(chan struct{})
		e.wg.Go(func() { // the server side, which outlives a client that gives up
			defer close(done)
			h.ServeHTTP(w, req)
		})
		select {
		case <-done:
			return result(w.code, nil), w.h.Get("Retry-After") != ""
		case <-ctx.Done():
			return resTimedOut, false
		}
	}
}

func (e *engine) overHTTP(client *http.Client, url string) sender {
	return func(ctx context.Context, path string, p priority.Priority) (int, bool) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+path, nil)
		if err != nil {
			return resOther, false
		}
		req.Header.Set("Priority", p.String())
		resp, err := client.Do(req)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return resTimedOut, false
			}
			return resOther, false
		}
		drain(resp)
		return result(resp.StatusCode, nil), resp.Header.Get("Retry-After") != ""
	}
}

func result(code int, ctxErr error) int {
	switch {
	case code == http.StatusOK:
		return resServed
	case code == http.StatusServiceUnavailable:
		return resShed
	case code == 0 && ctxErr != nil:
		return resTimedOut
	}
	return resOther
}

// generate sends route i's requests, evenly spaced, each on a goroutine of
// its own (counted in wg), until ctx ends.
func (e *engine) generate(ctx context.Context, i int, r routeSpec, send sender) {
	total := int(r.rate * e.spec.duration.Seconds())
	for k := range total {
		at := time.Duration(float64(k) / r.rate * float64(time.Second))
		if !e.clk.sleepUntil(ctx, at) {
			return
		}
		p := priority.Default
		if len(r.mix) > 0 {
			p = r.mix[k%len(r.mix)]
		}
		e.wg.Go(func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.wall(e.spec.clientTimeout))
			defer cancel()
			start := e.clk.now()
			res, ra := send(rctx, r.path, p)
			if ctx.Err() != nil {
				return // cut off by the end of the run: no verdict
			}
			e.record(i, p, res, ra, start, e.clk.now()-start)
		})
	}
}

func (e *engine) record(i int, p priority.Priority, res int, retryAfter bool, start, took time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := &e.acc[i]
	a.byPriority[p][res]++
	if res == resShed && retryAfter {
		a.retryAfter++
	}
	if s := int(start / time.Second); s < len(a.secs) {
		a.secs[s][res]++
	}
	if res == resServed {
		if start < e.spec.healthyUntil {
			a.healthy = append(a.healthy, took)
		} else {
			a.loaded = append(a.loaded, took)
		}
	}
}

// sample notes the busy workers every 10 ms of scenario time.
func (e *engine) sample(ctx context.Context) {
	for k := 0; ; k++ {
		at := time.Duration(k) * 10 * time.Millisecond
		if at >= e.spec.duration || !e.clk.sleepUntil(ctx, at) {
			return
		}
		b := len(e.sem)
		e.mu.Lock()
		if s := int(at / time.Second); s < len(e.busy) && b > e.busy[s] {
			e.busy[s] = b
		}
		e.mu.Unlock()
	}
}

// quantile returns the q-quantile of ds (0 for none).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(int(q*float64(len(s))), len(s)-1)]
}
