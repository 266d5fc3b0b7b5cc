package fusehttp

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Transport is an http.RoundTripper that gives every supplier its own
// bulkhead and breaker: each request runs on the executor that Group keeps
// for the request's key (by default its host:port):
//
//	client := &http.Client{Transport: &fusehttp.Transport{Group: g}}
//
// A refused request fails at once with the executor's *RejectedError. An
// admitted request holds its slot until its response body is closed or read
// to the end, or until the executor's InvocationTimeout, which so bounds the
// whole exchange, body included. Set the fields before first use. A
// Transport is safe for concurrent use.
type Transport struct {
	// Group supplies one executor per key; its GroupConfig sets the slots,
	// timeouts and breaker rules of every supplier. Required. With an
	// unbounded set of hosts, set GroupConfig.IdleTimeout so the executors of
	// hosts no longer called are evicted.
	Group *executor.Group

	// Base makes the actual requests, on the caller's goroutine. nil means a
	// clone of http.DefaultTransport owned by this Transport. Base must honour
	// the request's context: the executor ends an exchange by cancelling it. A
	// panic in Base becomes a *breaker.PanicError (a failure); a nil Body
	// becomes http.NoBody; a nil response with a nil error is a failure. An
	// error of the request body's own Read is returned to the caller and
	// recorded as ignored. Give an *http.Transport of your own as many idle
	// connections per host as there are slots (MaxIdleConnsPerHost).
	Base http.RoundTripper

	// Key names the executor of a request. nil, or a Key that returns ""
	// for a request, means the request's host and port: one bulkhead and
	// breaker per host and port, the URL's host name lower-cased and its
	// port, with the scheme's default when the URL has none (so
	// "https://Example.com/" and "https://example.com:443/" share an
	// executor). A func of your own can group by anything: the host alone
	// (strings.ToLower(r.URL.Hostname()) groups the ports of a host), a
	// service name in a header, a path prefix; it returns "" for the
	// requests it leaves to host and port. It runs on the caller's
	// goroutine; if it panics, RoundTrip returns a *breaker.PanicError
	// naming it and sends nothing.
	Key func(*http.Request) string

	// Names maps supplier addresses to supplier names, so that
	// configuration keys and metric labels read as the supplier
	// ("payments") rather than its address: a request whose key (Key's, by
	// default host:port) is in Names, or failing that whose host name
	// alone, lower-cased, is, runs on the executor of the name it maps to.
	// Several addresses may map to one name and share its bulkhead and
	// breaker. Other requests keep their key; with a Strict group they are
	// refused, which makes Names an allow-list of suppliers. nil means no
	// mapping.
	//
	//	Names: map[string]string{"payments.internal:443": "payments", "search.internal": "search"}
	Names map[string]string

	// Classify turns the outcome of one exchange into the error the
	// supplier's breaker records: nil for a success, any error for a
	// failure (as the breaker's own Config.Classify sees it; by default
	// every error but context.Canceled is a failure). It never changes what
	// the caller receives: a response classified as a failure still reaches
	// the caller as a normal *http.Response with a nil error. It must not
	// read or close the response body. nil means DefaultClassify. It runs
	// on the caller's goroutine, in RoundTrip, with the slot held: keep it
	// pure and quick, since a Classify that blocks blocks the call (the
	// invocation timeout does not end it). If it panics, the breaker
	// records the call as a failure with a *breaker.PanicError naming it,
	// and the caller still gets the response; if it ends the goroutine
	// (runtime.Goexit), the response, which no caller will get, is closed,
	// the slot is given back, recorded the same way, and the Goexit goes
	// on.
	Classify func(*http.Response, error) error

	// MaxRetryAfter caps how long an upstream's Retry-After keeps its
	// breaker open: a 429 or 503 response with a Retry-After header opens
	// the supplier's breaker until the time it names, or for MaxRetryAfter
	// if that is sooner (see the package documentation, "Backpressure").
	// 0 means 1 minute; a negative value turns the rule off.
	MaxRetryAfter time.Duration

	// PriorityHeader names the header that carries the priority of a
	// request's context (priority.From) to the supplier, so that a service
	// downstream that trusts this one sheds work in the same order, in
	// place of any value the request's own header gives that name, in any
	// case. A Default priority sends no header. "" means priority.Header;
	// "-" sends none.
	PriorityHeader string

	baseOnce sync.Once
	base     http.RoundTripper
}

// hostPort is the default key: see Transport.Key.
func hostPort(r *http.Request) string {
	port := r.URL.Port()
	if port == "" {
		switch strings.ToLower(r.URL.Scheme) {
		case "https", "wss":
			port = "443"
		default:
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(r.URL.Hostname()), port)
}

// StatusError is the error DefaultClassify records on the breaker for a
// response whose status counts as a failure. Callers never see it: they get
// the response itself. Match it in breaker.Config.ErrorKinds or
// Config.Classify with errors.As.
type StatusError struct {
	StatusCode int
}

// Error says which status the supplier answered; a nil *StatusError says
// so instead of panicking in the caller's log line.
func (e *StatusError) Error() string {
	if e == nil {
		return "fusehttp: a nil *StatusError"
	}
	return fmt.Sprintf("fusehttp: supplier answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// DefaultClassify counts as failures what says the supplier is in trouble:
// transport errors (refused or reset connections, timeouts, the caller's
// context.Canceled, which the breaker then ignores), 5xx responses and 429
// Too Many Requests, the last two as a *StatusError. Every other response,
// 4xx included, is a success: the supplier answered. An error of a request
// that net/http refuses to send (an invalid header value, say) is a
// transport error like any other, so it counts as a failure unless a
// Classify of one's own says otherwise; an error of the request body's own
// Read never reaches Classify (see Transport.Base). A nil response with a
// nil error, which no RoundTripper may return (Transport never passes it
// on), is a failure too, with an error saying so.
func DefaultClassify(resp *http.Response, err error) error {
	switch {
	case err != nil:
		return err
	case resp == nil:
		return errors.New("fusehttp: DefaultClassify of a nil *http.Response with a nil error")
	case resp.StatusCode >= 500, resp.StatusCode == http.StatusTooManyRequests:
		return &StatusError{StatusCode: resp.StatusCode}
	}
	return nil
}

// RoundTrip sends req through the executor of its key. It returns the
// executor's *RejectedError (errors.Is ErrOpen, ErrSaturated or ErrClosed)
// at once when the call is refused, without reading req.Body, which it
// closes as the RoundTripper contract asks. It returns req's context error
// when the caller gives up first, and executor.ErrTimeout when the call
// outlives the invocation timeout before a response arrives; a body that
// the invocation timeout cuts off returns an error matching
// executor.ErrTimeout from Read. A nil *Transport, a nil req or one
// without a URL fails at once with an error saying which, as net/http's
// own Transport does, and sends nothing.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	key, err := t.key(req)
	if err == nil {
		var l *executor.Lease
		// LeaseIn, not a lookup and Lease: it looks again if idle eviction
		// closed the host's executor in between.
		if l, err = executor.LeaseIn(req.Context(), t.Group, key); err == nil {
			resp, err := t.exchange(req, l)
			t.backpressure(key, resp)
			return resp, err
		}
	}
	closeBody(req) // never read: nothing was sent
	return nil, err
}

// key returns the name of the executor that req runs on. It checks first
// what the rest of RoundTrip, and Key, rely on.
func (t *Transport) key(req *http.Request) (string, error) {
	switch {
	case t == nil:
		return "", errors.New("fusehttp: RoundTrip on a nil *Transport")
	case req == nil:
		return "", errors.New("fusehttp: nil Request")
	case req.URL == nil:
		return "", errors.New("fusehttp: nil Request.URL")
	case t.Group == nil:
		return "", errors.New("fusehttp: Transport.Group is nil")
	}
	var key string
	if t.Key != nil {
		var err error
		if key, err = breaker.Guard("fusehttp.Transport.Key", func() (string, error) { return t.Key(req), nil }, nil); err != nil {
			return "", err
		}
	}
	if key == "" {
		key = hostPort(req)
	}
	if key = t.name(key, req); key == "" {
		return "", fmt.Errorf("fusehttp: Transport.Names maps the request to %q to an empty name", req.URL.Redacted())
	}
	return key, nil
}

// name returns the supplier name Names gives key or req's host, else key.
func (t *Transport) name(key string, req *http.Request) string {
	if len(t.Names) == 0 || key == "" {
		return key
	}
	if name, ok := t.Names[key]; ok {
		return name
	}
	if name, ok := t.Names[strings.ToLower(req.URL.Hostname())]; ok {
		return name
	}
	return key
}

// CloseIdleConnections closes the idle connections of the base transport,
// if it has such a method. http.Client.CloseIdleConnections calls it. A
// nil *Transport has no connections: it does nothing.
func (t *Transport) CloseIdleConnections() {
	if t == nil {
		return
	}
	if c, ok := t.baseTransport().(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (t *Transport) baseTransport() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	t.baseOnce.Do(func() {
		if dt, ok := http.DefaultTransport.(*http.Transport); ok {
			t.base = dt.Clone()
		} else {
			t.base = http.DefaultTransport
		}
	})
	return t.base
}

// closeBody closes the body of a request that will never be sent, if it
// has one.
func closeBody(req *http.Request) {
	if req != nil && req.Body != nil {
		req.Body.Close()
	}
}
