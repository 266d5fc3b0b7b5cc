// Package inbound protects a service's own HTTP routes with the bulkheads
// and breakers fusebox gives its outgoing calls: Handler admits each
// request through the executor of its route (the http.ServeMux pattern by
// default), holds the slot until the handler returns, and sheds a refused
// request at once with 503 Service Unavailable and Retry-After, so that one
// slow route cannot take every request worker. Config.Group sets each
// route's slots, deadline, breaker and critical share (see package
// priority); fusehttp.Transport on the client side honours the Retry-After.
//
//	cfg := inbound.Config{Group: g}
//	mux.Handle("GET /search", inbound.Handler(search, cfg))
//	mux.Handle("GET /home", inbound.Handler(home, cfg))
package inbound

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Config configures Handler: which executor admits a request, and
// what a refused request is answered.
type Config struct {
	// Group supplies one executor per route; its GroupConfig sets each
	// route's slots (Workers), its handler deadline (InvocationTimeout), its
	// breaker and its critical share. Required.
	Group *executor.Group

	// Key names the executor of a request. nil means the http.ServeMux
	// pattern that matched the request (Request.Pattern, e.g.
	// "GET /search/{q}"): wrap each handler you register on the mux, or
	// wrap the mux itself, whose pattern Handler then looks up (one or the
	// other: a request through both would take two slots). A request that
	// reached a wrapped mux and matched no pattern (the mux answers 404),
	// or whose Key returns "", is served without a slot. Any other request
	// without a pattern (next is a router other than *http.ServeMux, a
	// mux behind a middleware such as http.StripPrefix, or a ServeMux under
	// GODEBUG=httpmuxgo121=1, which sets no pattern) is a mistake of
	// configuration that would leave every route unprotected: it is
	// answered 500, and next is not called. Set Key for such a router. A Key of your own runs on the
	// request's goroutine; if it panics, the request is answered 500 and
	// the handler is not called.
	Key func(*http.Request) string

	// Reject answers a request that was refused a slot. nil means a 503
	// Service Unavailable with a Retry-After header, in whole seconds
	// rounded up: the time to the breaker's next probe when the route's
	// breaker is open, 1 s when its slots are merely busy (see
	// executor.RejectedError.RetryAfter); no Retry-After when no time is
	// known (a breaker forced open, a closed Group). err is the executor's
	// *RejectedError, or the error of a lease that could not begin (a queue
	// timeout, executor.ErrUnknownDependency in a Strict group).
	Reject func(w http.ResponseWriter, r *http.Request, err error)
}

// Handler returns a handler that admits each request through the executor
// of its route before it calls next, and holds the slot until next
// returns: a route whose handlers are slow (a supplier hangs, a table is
// locked) fills its own bulkhead and is shed, while the other routes keep
// their workers. A refused request is answered at once (see
// Config.Reject), without calling next.
//
//	mux.Handle("GET /search", inbound.Handler(search, cfg))
//	mux.Handle("GET /home", inbound.Handler(home, cfg))
//
// The request keeps its own context: the client's cancellation ends the
// handler's work as usual. A handler still running at its route's
// InvocationTimeout is counted as a timeout on the breaker and as overdue,
// as a call that outlives its deadline is, and keeps its slot until it
// returns; the saturation of a route full of such handlers trips its
// breaker. A panic in next counts as a failure and goes on up to
// http.Server, as without Handler; a next that ends its goroutine
// (runtime.Goexit) counts as a failure too, a *breaker.PanicError, unless
// the client had gone. Handler returns an error handler
// (500 to every request) when cfg has no Group, so that the mistake shows
// on the first request rather than in a nil dereference.
func Handler(next http.Handler, cfg Config) http.Handler {
	if cfg.Group == nil || next == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "inbound: Handler needs a Config.Group and a handler", http.StatusInternalServerError)
		})
	}
	return &handler{next: next, cfg: cfg, mux: asMux(next)}
}

type handler struct {
	next http.Handler
	cfg  Config
	mux  *http.ServeMux // next, if it is a mux
}

func asMux(h http.Handler) *http.ServeMux {
	m, _ := h.(*http.ServeMux)
	return m
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key, err := h.key(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if key == "" {
		h.next.ServeHTTP(w, r)
		return
	}
	l, err := executor.LeaseIn(r.Context(), h.cfg.Group, key)
	if err != nil {
		h.reject(w, r, err)
		return
	}
	h.serve(w, r, l)
}

// serve runs next in the slot of l under executor.Guard and ends the
// lease however next ends: a panic is a failure (http.ErrAbortHandler
// is the client's, not the route's) and goes on to http.Server; a Goexit
// is a failure unless the client had gone; a client that went away while
// the handler worked is ignored by the breaker, as a caller's
// cancellation is.
func (h *handler) serve(w http.ResponseWriter, r *http.Request, l *executor.Lease) {
	_, err := breaker.Guard("handler", func() (struct{}, error) {
		h.next.ServeHTTP(w, r)
		return struct{}{}, nil
	}, func(perr error) {
		if cerr := r.Context().Err(); cerr != nil {
			perr = cerr
		}
		l.Done(perr)
	})
	if perr, ok := err.(*breaker.PanicError); ok {
		if perr.Value == http.ErrAbortHandler {
			l.Done(r.Context().Err())
		} else {
			l.Done(perr)
		}
		panic(perr.Value)
	}
	l.Done(r.Context().Err())
}

// errNoPattern answers a request that no http.ServeMux routed, when
// Config.Key is nil.
var errNoPattern = errors.New("inbound: no route pattern for this request: wrap the handlers registered on an http.ServeMux, or the mux itself, or set Config.Key")

// key returns the executor name of r.
func (h *handler) key(r *http.Request) (string, error) {
	if h.cfg.Key != nil {
		return breaker.Guard("inbound.Config.Key", func() (string, error) { return h.cfg.Key(r), nil }, nil)
	}
	switch {
	case r.Pattern != "":
		return r.Pattern, nil
	case h.mux != nil:
		_, p := h.mux.Handler(r)
		return p, nil
	}
	// No mux has routed r, and next is not one: every request would be
	// served without a slot, silently.
	return "", errNoPattern
}

func (h *handler) reject(w http.ResponseWriter, r *http.Request, err error) {
	if h.cfg.Reject != nil {
		h.cfg.Reject(w, r, err)
		return
	}
	var re *executor.RejectedError
	if errors.As(err, &re) {
		if d := re.RetryAfter(); d > 0 {
			w.Header().Set("Retry-After", strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10))
		}
	}
	http.Error(w, err.Error(), http.StatusServiceUnavailable)
}
