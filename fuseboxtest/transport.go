package fuseboxtest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fusebox-go/fusebox/breaker"
)

// Transport is an http.RoundTripper that serves every request with
// Handler, in memory: no socket, no server goroutine, so an HTTP client
// (behind fusehttp.Transport, say) runs inside a testing/synctest bubble,
// hung calls included. Each RoundTrip runs Handler on a goroutine of its
// own and returns the response once the handler writes, flushes or
// returns; the body streams what it writes. The handler's request context
// ends when the client's does, when the body is closed, and when the
// handler returns. A handler that panics fails the round trip (or the
// body's Read) with a *breaker.PanicError. A Transport is safe for
// concurrent use.
type Transport struct {
	// Handler answers the requests: a *Fake, fake.Handler(yours), or any
	// http.Handler. Required.
	Handler http.Handler
}

// errClosedBody is what a response body's Read returns after Close, as
// net/http's does, and errGone what the handler's Write returns then.
var (
	errClosedBody = errors.New("fuseboxtest: read on closed response body")
	errGone       = errors.New("fuseboxtest: the client closed the response body")
)

// RoundTrip serves req with t.Handler. It returns req's context error if
// the context ends before the handler responds: a hung handler never holds
// its caller past the caller's deadline. A nil *Transport or Handler, a
// nil req or one without a URL is an error saying which, and runs nothing.
// req.Body is closed once the handler returns.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case req == nil:
		return nil, errors.New("fuseboxtest: Transport.RoundTrip of a nil *http.Request")
	case t == nil:
		closeRequestBody(req)
		return nil, errors.New("fuseboxtest: RoundTrip of a nil *Transport")
	case t.Handler == nil:
		closeRequestBody(req)
		return nil, errors.New("fuseboxtest: Transport.Handler is nil: set it to the handler that answers the requests")
	case req.URL == nil:
		closeRequestBody(req)
		return nil, errors.New("fuseboxtest: Transport.RoundTrip of a request with a nil URL")
	}
	if err := req.Context().Err(); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	ctx, cancel := context.WithCancel(req.Context())
	pr, pw := io.Pipe()
	w := &responseWriter{
		req:     req,
		header:  make(http.Header),
		pw:      pw,
		ready:   make(chan struct{}),
		cancel:  cancel,
		headOff: req.Method == http.MethodHead,
	}
	w.body = &body{pr: pr, cancel: cancel}
	// A client that gives up fails the body's reads and the handler's
	// writes, as a closed connection would; stopped once the handler is done.
	stop := context.AfterFunc(ctx, func() {
		if err := req.Context().Err(); err != nil {
			pw.CloseWithError(err)
		}
	})
	go w.serve(t.Handler, serverRequest(ctx, req), stop)

	select {
	case <-w.ready:
	case <-req.Context().Done():
		cancel()
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	if w.err != nil {
		pr.Close()
		return nil, w.err
	}
	return w.resp, nil
}

// serverRequest returns req as a handler behind a server would see it.
func serverRequest(ctx context.Context, req *http.Request) *http.Request {
	r := req.Clone(ctx)
	r.RequestURI = req.URL.RequestURI()
	r.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	if r.Host == "" {
		r.Host = req.URL.Host
	}
	if r.Body == nil {
		r.Body = http.NoBody
	}
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	r.RemoteAddr = "192.0.2.1:1234" // TEST-NET-1, as httptest.NewRequest
	if strings.EqualFold(req.URL.Scheme, "https") {
		r.TLS = &tls.ConnectionState{Version: tls.VersionTLS12, HandshakeComplete: true, ServerName: r.Host}
	}
	return r
}

// closeRequestBody closes req's body, as a RoundTripper must.
func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// responseWriter is the handler's http.ResponseWriter. The response goes
// to RoundTrip (through ready) at the first Write or Flush, or when the
// handler returns; the body goes through pw.
type responseWriter struct {
	req     *http.Request
	pw      *io.PipeWriter
	body    *body
	cancel  context.CancelFunc
	headOff bool // a HEAD request: writes are discarded

	mu      sync.Mutex // guards the fields below, against a handler's own goroutines
	header  http.Header
	code    int  // the status from WriteHeader; 0 until then
	sent    bool // ready is closed
	ready   chan struct{}
	resp    *http.Response // set before ready is closed
	err     error          // instead of resp: the handler panicked first
	discard bool           // the status allows no body
}

// serve runs h and ends the exchange when it returns, panics or exits its
// goroutine.
func (w *responseWriter) serve(h http.Handler, r *http.Request, stop func() bool) {
	end := func(err error) {
		stop()
		w.finish(err)
		w.cancel()
		closeRequestBody(w.req)
	}
	_, err := breaker.Guard("fuseboxtest.Transport.Handler", func() (struct{}, error) {
		h.ServeHTTP(w, r)
		return struct{}{}, nil
	}, end)
	end(err)
}

// finish delivers the response if the handler never wrote, and ends the
// body: at EOF, or with err.
func (w *responseWriter) finish(err error) {
	w.mu.Lock()
	if !w.sent {
		if err != nil {
			w.err = err
			w.sent = true
			close(w.ready)
		} else {
			w.deliver()
		}
	}
	w.mu.Unlock()
	if err == nil {
		// The client's context error, not EOF, if it ended the handler:
		// the AfterFunc may not have run yet.
		err = w.req.Context().Err()
	}
	w.pw.CloseWithError(err) // nil: EOF
}

// Header returns the response's header map; changes after the response is
// sent are ignored, as on a server.
func (w *responseWriter) Header() http.Header {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.header
}

// WriteHeader sets the status of the response; later calls are ignored.
func (w *responseWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code)) // as net/http
	}
	if w.code == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.code = code // 1xx informational responses are not the response
	}
}

// Write sends the response (200 if WriteHeader was not called) and
// streams p to the client: it returns once the client has read p, or with
// an error once the client has gone.
func (w *responseWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if !w.sent {
		if _, typed := w.header["Content-Type"]; !typed && len(p) > 0 {
			w.header.Set("Content-Type", http.DetectContentType(p)) // as net/http
		}
		w.deliver()
	}
	discard := w.discard
	w.mu.Unlock()
	switch {
	case w.headOff:
		return len(p), nil
	case discard:
		return 0, http.ErrBodyNotAllowed
	}
	n, err := w.pw.Write(p)
	if err != nil && w.req.Context().Err() != nil {
		err = w.req.Context().Err() // the client gave up
	}
	return n, err
}

// Flush sends the response now if it is not sent yet.
func (w *responseWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.sent {
		w.deliver()
	}
}

// deliver makes the response of what the handler set so far and hands it
// to RoundTrip; w.mu is held.
func (w *responseWriter) deliver() {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.discard = w.code == http.StatusNoContent || w.code == http.StatusNotModified || w.code < 200
	resp := &http.Response{
		Status:        strconv.Itoa(w.code) + " " + http.StatusText(w.code),
		StatusCode:    w.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.header.Clone(),
		Body:          w.body,
		ContentLength: -1,
		Request:       w.req,
	}
	if n, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		resp.ContentLength = n
	}
	if w.headOff || w.discard {
		resp.Body, resp.ContentLength = http.NoBody, 0 // the handler runs on until it returns
	}
	w.resp, w.sent = resp, true
	close(w.ready)
}

// body is a response's Body: it reads what the handler writes.
type body struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
	closed atomic.Bool
}

// Read reads what the handler wrote; io.EOF once the handler has
// returned, the client context's error once it has ended.
func (b *body) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, errClosedBody
	}
	return b.pr.Read(p)
}

// Close fails the handler's further writes and ends its request
// context. It does not wait for the handler to return.
func (b *body) Close() error {
	b.closed.Store(true)
	b.pr.CloseWithError(errGone)
	b.cancel()
	return nil
}
