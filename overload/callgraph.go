package overload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	zbreaker "github.com/zeromicro/go-zero/core/breaker"
	"github.com/zeromicro/go-zero/core/load"
	"github.com/zeromicro/go-zero/core/logx"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
	"github.com/fusebox-go/fusebox/throttle"
)

// The three-tier call graph: an edge (the load) sends checkout and
// recommendations requests to a frontend, whose one supplier is a
// backend. Each route of the frontend calls the backend's route of the
// same name.
const (
	Checkout = "checkout" // critical: a purchase
	Recs     = "recs"     // sheddable: recommendations
)

// GraphSubjects are the protections of the call graph, in the order of
// the table.
var GraphSubjects = []string{"fusebox", "fusebox-400", "gozero", "none"}

// GraphNotes says what each subject of the call graph is, for the legend.
var GraphNotes = map[string]string{
	"fusebox": "frontend: fusehttp.Transport whose Key gives each priority its own executor for the backend (bulkhead, breaker, throttle): " +
		"60 slots for critical calls (about C × 0.13 s), 12 for sheddable ones, 1 s timeout, Throttle &throttle.Config{} (K 2 critical, 1 sheddable), " +
		"breaker ConsecutiveFailures -1 (the throttle answers overload; saturation still trips), the route's priority sent in Fusebox-Priority; " +
		"backend: inbound.TrustedPriority(PeerIn 127.0.0.0/8) then shed.New(shed.Config{})",
	"fusebox-400": "the same backend; the frontend's one executor for every priority has 400 slots (C × the edge's 1 s deadline)",
	"gozero": "frontend: core/breaker.NewBreaker() (its Google SRE breaker), acceptable as its rest/httpc (status < 500); " +
		"backend: load.NewAdaptiveShedder() per route as its rest engine (CPU threshold 900 per mille; 950 for the checkout route, marked priority). " +
		"No priority crosses the hop: the backend knows checkout only by its route",
	"none": "plain net/http on both tiers",
}

// frontendGroup is the frontend's executor configuration for subject:
// for "fusebox", one executor per priority (Transport.Key), 60 slots for
// critical calls, about C × 0.13 s, so that the backend never queues more
// than that, and 12 for sheddable ones; for "fusebox-400", one executor
// for every priority with 400 slots, C × the edge's 1 s deadline.
func frontendGroup(subject string) executor.GroupConfig {
	c := executor.Config{
		Slots:             60,
		InvocationTimeout: time.Second,
		// The throttle answers an overloaded backend; a bulkhead full of
		// stuck calls still trips the breaker.
		Breaker:  breaker.Config{ConsecutiveFailures: -1, ResetTimeout: 2 * time.Second},
		Throttle: &throttle.Config{},
	}
	if subject == "fusebox-400" {
		c.Slots = 400
		return executor.GroupConfig{Default: c}
	}
	sheddable := c
	sheddable.Slots = 12
	return executor.GroupConfig{Default: c, Suppliers: map[string]executor.Config{"backend-sheddable": sheddable}}
}

// priorityOf is the priority the frontend gives each of its routes.
func priorityOf(route string) priority.Priority {
	if route == Checkout {
		return priority.Critical
	}
	return priority.Sheddable
}

// BackendCounts are what reached a backend and what it admitted (the
// handler ran), and the connections it accepted, since it started.
type BackendCounts struct {
	Arrived, Admitted, Conns uint64
}

// counting counts arrivals around its handler and admissions inside the
// protection.
type counting struct {
	arrived, admitted atomic.Uint64
}

func (c *counting) counts() BackendCounts {
	return BackendCounts{Arrived: c.arrived.Load(), Admitted: c.admitted.Load(), Conns: accepted.Load()}
}

// accepted counts the connections this process's server accepted.
var accepted atomic.Uint64

// ConnState is the http.Server.ConnState of the call graph's processes:
// it counts the connections accepted (BackendCounts.Conns, FrontCounts).
func ConnState(_ net.Conn, s http.ConnState) {
	if s == http.StateNew {
		accepted.Add(1)
	}
}

// FrontCounts are the frontend's outcomes of its calls to the backend,
// by route and outcome (see outcome), the connections it accepted from
// the edge and dialled to the backend, and its executors' Stats.
type FrontCounts struct {
	Routes          map[string]map[string]uint64
	Accepted, Dials uint64
	Executors       map[string]executor.Stats
}

// since subtracts the counts of b (taken earlier) from f's, but for the
// executors' Stats.
func (f *FrontCounts) since(b FrontCounts) {
	for r, m := range f.Routes {
		for o := range m {
			m[o] -= b.Routes[r][o]
		}
	}
	f.Accepted -= b.Accepted
	f.Dials -= b.Dials
}

// outcome names what became of a frontend's call: "ok", "backend <code>"
// (the backend's answer), "refused <reason>" (the frontend's executor or
// go-zero's breaker), "timeout" (the frontend's own invocation timeout),
// "cancelled" (the edge gave up first) or "error" (the connection).
func outcome(ctx context.Context, resp *http.Response, err error) string {
	var rej *executor.RejectedError
	switch {
	case err == nil && resp.StatusCode == http.StatusOK:
		return "ok"
	case err == nil:
		return fmt.Sprintf("backend %d", resp.StatusCode)
	case errors.As(err, &rej):
		return "refused " + rej.Reason.String()
	case errors.Is(err, zbreaker.ErrServiceUnavailable):
		return "refused gozero"
	case ctx.Err() != nil:
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "error"
}

// Backend returns the backend of the call graph for subject: work (at
// /work/checkout and /work/recs) behind the subject's protection,
// /admin/counts, which answers its BackendCounts in JSON, and /admin/shed,
// the fusebox subject's shed.Stats. release stops what it started.
func Backend(subject string, work http.Handler) (h http.Handler, release func(), err error) {
	c := &counting{}
	admitted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.admitted.Add(1)
		work.ServeHTTP(w, r)
	})
	var protected http.Handler
	release = func() {}
	switch subject {
	case "none":
		protected = admitted
	case "fusebox", "fusebox-400":
		s, err := shed.New(shed.Config{})
		if err != nil {
			return nil, nil, err
		}
		loopback := inbound.PeerIn(netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))
		protected = inbound.TrustedPriority("", loopback)(s.Handler(admitted, nil))
		shedder.Store(s) // for /admin/shed
		release = func() { s.Close() }
	case "gozero":
		load.DisableLog()
		logx.Disable()
		// As go-zero's rest engine: one shedder for ordinary routes, one
		// with a threshold halfway to 1000 for routes marked priority.
		normal := goZero(load.NewAdaptiveShedder(load.WithCpuThreshold(900)), admitted)
		prio := goZero(load.NewAdaptiveShedder(load.WithCpuThreshold((900+1000)>>1)), admitted)
		protected = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/work/"+Checkout {
				prio.ServeHTTP(w, r)
				return
			}
			normal.ServeHTTP(w, r)
		})
	default:
		return nil, nil, fmt.Errorf("overload: unknown call-graph subject %q (want one of %v)", subject, GraphSubjects)
	}
	mux := http.NewServeMux()
	mux.Handle("/work/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.arrived.Add(1)
		protected.ServeHTTP(w, r)
	}))
	mux.HandleFunc("/admin/counts", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(c.counts())
	})
	mux.HandleFunc("/admin/shed", func(w http.ResponseWriter, _ *http.Request) {
		st, _ := ShedStats()
		json.NewEncoder(w).Encode(st)
	})
	return mux, release, nil
}

// Frontend returns the frontend of the call graph for subject: /checkout
// and /recs, each a call to the backend at base (http://host:port) under
// the subject's protection, answered 200 when the backend answered 200
// and 503 when the call was refused or shed; and /admin/stats, its
// FrontCounts in JSON. release stops what it started.
func Frontend(subject, base string) (h http.Handler, release func(), err error) {
	if !strings.HasPrefix(base, "http://") {
		return nil, nil, fmt.Errorf("overload: frontend: backend %q: want http://host:port", base)
	}
	tr := Client().Transport.(*http.Transport)
	var dials atomic.Uint64
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	var mu sync.Mutex
	routes := map[string]map[string]uint64{Checkout: {}, Recs: {}}
	call := func(ctx context.Context, route string, rt http.RoundTripper) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/work/"+route, nil)
		if err != nil {
			return nil, err
		}
		return rt.RoundTrip(req)
	}
	var do func(ctx context.Context, route string) (*http.Response, error)
	release = tr.CloseIdleConnections
	executors := func() map[string]executor.Stats { return nil }
	switch subject {
	case "none":
		do = func(ctx context.Context, route string) (*http.Response, error) { return call(ctx, route, tr) }
	case "fusebox", "fusebox-400":
		gc := frontendGroup(subject)
		g, err := executor.NewGroup(gc)
		if err != nil {
			return nil, nil, err
		}
		// One executor per priority: its own slots, breaker and throttle.
		key := func(r *http.Request) string { return "backend-" + priority.From(r.Context()).String() }
		if subject == "fusebox-400" {
			key = func(*http.Request) string { return "backend" }
		}
		ft := &fusehttp.Transport{Group: g, Base: tr, Key: key}
		do = func(ctx context.Context, route string) (*http.Response, error) {
			return call(priority.With(ctx, priorityOf(route)), route, ft)
		}
		release = func() { g.Close(context.Background()); tr.CloseIdleConnections() }
		executors = func() map[string]executor.Stats {
			out := map[string]executor.Stats{}
			for _, name := range []string{"backend", "backend-critical", "backend-sheddable"} {
				if ex, ok := g.Lookup(name); ok {
					out[name] = ex.Stats()
				}
			}
			return out
		}
	case "gozero":
		logx.Disable()
		brk := zbreaker.NewBreaker(zbreaker.WithName("backend"))
		do = func(ctx context.Context, route string) (resp *http.Response, err error) {
			err = brk.DoWithAcceptableCtx(ctx, func() error {
				resp, err = call(ctx, route, tr)
				return err
			}, func(err error) bool {
				// rest/httpc's rule: an answer below 500 or the caller's
				// own cancellation is accepted.
				if err == nil {
					return resp.StatusCode < http.StatusInternalServerError
				}
				return errors.Is(err, context.Canceled)
			})
			return resp, err
		}
	default:
		return nil, nil, fmt.Errorf("overload: unknown call-graph subject %q (want one of %v)", subject, GraphSubjects)
	}
	mux := http.NewServeMux()
	for _, route := range []string{Checkout, Recs} {
		mux.HandleFunc("/"+route, func(w http.ResponseWriter, r *http.Request) {
			resp, err := do(r.Context(), route)
			o := outcome(r.Context(), resp, err)
			mu.Lock()
			routes[route][o]++
			mu.Unlock()
			if err != nil {
				if refused(err) {
					http.Error(w, err.Error(), http.StatusServiceUnavailable)
					return
				}
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			w.WriteHeader(resp.StatusCode)
		})
	}
	mux.HandleFunc("/admin/stats", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		fc := FrontCounts{Routes: map[string]map[string]uint64{}, Accepted: accepted.Load(), Dials: dials.Load(), Executors: executors()}
		for r, m := range routes {
			fc.Routes[r] = maps.Clone(m)
		}
		mu.Unlock()
		json.NewEncoder(w).Encode(fc)
	})
	return mux, release, nil
}

// refused reports whether err is a protection's refusal to send a call.
func refused(err error) bool {
	var rej *executor.RejectedError
	return errors.As(err, &rej) || errors.Is(err, breaker.ErrOpen) || errors.Is(err, zbreaker.ErrServiceUnavailable)
}
