package inbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Config configures Handler: which executor admits a request, what a
// refused request is answered, and how its body is read. One Config may
// serve many routes.
type Config struct {
	// Group supplies one executor per route; its GroupConfig sets each
	// route's Slots, its handler deadline (InvocationTimeout), its
	// breaker and its critical share. Required.
	Group *executor.Group

	// Key names the executor of a request. nil means the http.ServeMux
	// pattern that matched the request (Request.Pattern): wrap each
	// handler you register on the mux, or the mux itself. A request that
	// matched no pattern (the mux answers 404), or whose Key returns "", is
	// served without a slot. Without a Key, a request that no mux routed
	// (another router, a mux behind http.StripPrefix) is answered 500 and
	// next is not called: set Key for such a router. A Key that panics
	// has its request answered 500, next not called.
	Key func(*http.Request) string

	// Reject answers a request that was refused a slot. nil means
	// WriteRefusal (503 with Retry-After when a time is known), and a
	// plain 503 for an error that is not a refusal (an
	// executor.ErrUnknownSupplier of a Strict group), logged. err is
	// the error of the lease that could not begin.
	Reject func(w http.ResponseWriter, r *http.Request, err error)

	// BodyLimit, above 0, has Handler read a request's body, at most
	// BodyLimit bytes, before it asks for a slot: a client that sends its
	// body slowly holds no slot and is not charged to the route. A body
	// over the limit is answered 413, one not sent within BodyTimeout 408,
	// one the client broke off 400, without a slot or a call to next.
	// 0 means next reads the body under the slot. Negative is an error.
	BodyLimit int64

	// BodyTimeout bounds the reading of the body BodyLimit has Handler
	// read, through the connection's read deadline. 0 means no bound of
	// its own (http.Server.ReadTimeout's holds). It needs a BodyLimit;
	// negative is an error.
	BodyTimeout time.Duration

	// Logger receives what a response leaves out: the reason of each 500
	// Handler answers (a panicking Key, a request no mux routed, an
	// invalid Config) and each lease error that is not a refusal. Plain
	// refusals are not logged (the executor counts them). nil means
	// slog.Default().
	Logger *slog.Logger
}

// validate returns the first mistake of cfg, naming its field.
func (cfg *Config) validate() error {
	switch {
	case cfg.Group == nil:
		return errors.New("inbound: Config.Group is required")
	case cfg.BodyLimit < 0:
		return fmt.Errorf("inbound: Config.BodyLimit is %d; want 0 (off) or more", cfg.BodyLimit)
	case cfg.BodyTimeout < 0:
		return fmt.Errorf("inbound: Config.BodyTimeout is %v; want 0 (none) or more", cfg.BodyTimeout)
	case cfg.BodyTimeout > 0 && cfg.BodyLimit == 0:
		return errors.New("inbound: Config.BodyTimeout is set without a Config.BodyLimit, which it bounds")
	}
	return nil
}

func (cfg *Config) logger() *slog.Logger {
	if cfg.Logger == nil {
		return slog.Default()
	}
	return cfg.Logger
}

// Handler returns a handler that admits each request through the executor
// of its route before it calls next, and holds the slot until next
// returns; a refused request is answered at once (Config.Reject), next not
// called. The request keeps its own context. A handler running past its
// route's InvocationTimeout counts as a timeout and overdue, and keeps its
// slot until it returns. A panic in next counts as a failure and goes on
// to http.Server; so does a runtime.Goexit, unless the client had gone.
// With an invalid cfg (no Group, a negative field) or a nil next, Handler
// logs the mistake and returns a handler that answers every request 500.
func Handler(next http.Handler, cfg Config) http.Handler {
	err := cfg.validate()
	if err == nil && next == nil {
		err = errors.New("inbound: Handler needs a handler (next is nil)")
	}
	if err != nil {
		cfg.logger().LogAttrs(context.Background(), slog.LevelError, err.Error())
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			internalError(w)
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
		h.logError(r, err)
		internalError(w)
		return
	}
	if key == "" {
		h.next.ServeHTTP(w, r)
		return
	}
	if h.cfg.BodyLimit > 0 {
		if code := h.buffer(w, r); code != 0 {
			// The connection is spent or its remainder unread.
			w.Header().Set("Connection", "close")
			http.Error(w, http.StatusText(code), code)
			return
		}
	}
	l, err := executor.LeaseIn(r.Context(), h.cfg.Group, key)
	if err != nil {
		h.reject(w, r, err)
		return
	}
	h.serve(w, r, l)
}

// serve runs next in the slot of l under breaker.Guard and ends the
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

// errNoPattern is logged for a request that no http.ServeMux routed, when
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
	if WriteRefusal(w, err) {
		return
	}
	h.cfg.logger().LogAttrs(r.Context(), slog.LevelWarn, "inbound: no slot for the request",
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("error", err.Error()))
	http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
}

// logError logs why r is answered 500, with the stack of a panic.
func (h *handler) logError(r *http.Request, err error) {
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("error", err.Error())}
	if perr, ok := err.(*breaker.PanicError); ok {
		attrs = append(attrs, slog.String("stack", string(perr.Stack)))
	}
	h.cfg.logger().LogAttrs(r.Context(), slog.LevelError, "inbound: request answered 500", attrs...)
}

// internalError answers 500 with a body that says nothing of the service.
func internalError(w http.ResponseWriter) {
	http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
}
