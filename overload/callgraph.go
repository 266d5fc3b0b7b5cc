package overload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
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
var GraphSubjects = []string{"fusebox", "fusebox-split", "gozero", "none"}

// GraphNotes says what each subject of the call graph is, for the legend.
var GraphNotes = map[string]string{
	"fusebox": "frontend: fusehttp.Transport, executor 400 slots, 1 s timeout, Throttle &throttle.Config{} (defaults: K 2 / 1.02 / 1 for critical / default / sheddable, counted per priority), " +
		"breaker ConsecutiveFailures -1 (the throttle answers overload; saturation still trips), the route's priority sent in Fusebox-Priority; " +
		"backend: inbound.TrustedPriority(PeerIn 127.0.0.0/8) then shed.New(shed.Config{})",
	"fusebox-split": "the same, but the frontend's Transport.Key gives each priority its own executor (bulkhead, breaker and throttle) for the backend, " +
		"so that sheddable calls filling their bulkhead cannot trip the breaker that critical calls go through",
	"gozero": "frontend: core/breaker.NewBreaker() (its Google SRE breaker), acceptable as its rest/httpc (status < 500); " +
		"backend: load.NewAdaptiveShedder() per route as its rest engine (CPU threshold 900 per mille; 950 for the checkout route, marked priority). " +
		"No priority crosses the hop: the backend knows checkout only by its route",
	"none": "plain net/http on both tiers",
}

// priorityOf is the priority the frontend gives each of its routes.
func priorityOf(route string) priority.Priority {
	if route == Checkout {
		return priority.Critical
	}
	return priority.Sheddable
}

// BackendCounts are what reached a backend and what it admitted (the
// handler ran), since it started.
type BackendCounts struct {
	Arrived, Admitted uint64
}

// counting counts arrivals around its handler and admissions inside the
// protection.
type counting struct {
	arrived, admitted atomic.Uint64
}

func (c *counting) counts() BackendCounts {
	return BackendCounts{Arrived: c.arrived.Load(), Admitted: c.admitted.Load()}
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
	case "fusebox", "fusebox-split":
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
// and 503 when the call was refused or shed; and /admin/stats, the
// fusebox subjects' executor.Stats by supplier, in JSON. release stops
// what it started.
func Frontend(subject, base string) (h http.Handler, release func(), err error) {
	if !strings.HasPrefix(base, "http://") {
		return nil, nil, fmt.Errorf("overload: frontend: backend %q: want http://host:port", base)
	}
	tr := Client().Transport.(*http.Transport)
	call := func(ctx context.Context, route string, rt http.RoundTripper) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/work/"+route, nil)
		if err != nil {
			return nil, err
		}
		return rt.RoundTrip(req)
	}
	var do func(ctx context.Context, route string) (*http.Response, error)
	release = tr.CloseIdleConnections
	stats := func() any { return nil }
	switch subject {
	case "none":
		do = func(ctx context.Context, route string) (*http.Response, error) { return call(ctx, route, tr) }
	case "fusebox", "fusebox-split":
		g, err := executor.NewGroup(executor.GroupConfig{Default: executor.Config{
			Slots:             400, // about C × the edge's 1 s deadline: every call that can still succeed
			InvocationTimeout: time.Second,
			Breaker:           breaker.Config{ConsecutiveFailures: -1, ResetTimeout: 2 * time.Second},
			Throttle:          &throttle.Config{},
		}})
		if err != nil {
			return nil, nil, err
		}
		key := func(*http.Request) string { return "backend" }
		if subject == "fusebox-split" {
			key = func(r *http.Request) string { return "backend-" + priority.From(r.Context()).String() }
		}
		ft := &fusehttp.Transport{Group: g, Base: tr, Key: key}
		do = func(ctx context.Context, route string) (*http.Response, error) {
			return call(priority.With(ctx, priorityOf(route)), route, ft)
		}
		release = func() { g.Close(context.Background()); tr.CloseIdleConnections() }
		stats = func() any {
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
		json.NewEncoder(w).Encode(stats())
	})
	return mux, release, nil
}

// refused reports whether err is a protection's refusal to send a call.
func refused(err error) bool {
	var rej *executor.RejectedError
	return errors.As(err, &rej) || errors.Is(err, breaker.ErrOpen) || errors.Is(err, zbreaker.ErrServiceUnavailable)
}
