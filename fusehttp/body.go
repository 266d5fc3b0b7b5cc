package fusehttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/priority"
)

// exchange makes the round trip under the lease l. It ends the lease when
// the response has no body to wait for; otherwise the body ends it.
func (t *Transport) exchange(req *http.Request, l *executor.Lease) (*http.Response, error) {
	ctx := l.Context()
	out := req.WithContext(ctx)
	if p := priority.From(ctx); p != priority.Default && t.PriorityHeader != "-" {
		out.Header = withPriority(req.Header, t.PriorityHeader, p)
	}
	var sent *sentBody
	if req.Body != nil && req.Body != http.NoBody && mayFail(req.Body) {
		sent = sendBody(out)
	}
	resp, err := t.roundTrip(out, l)
	if _, ok := err.(*breaker.PanicError); ok {
		l.Done(err)
		return nil, err
	}
	if err == nil && ctx.Err() != nil {
		// The lease ended while a base that ignored its context still ran:
		// the response is too late for anyone.
		resp.Body.Close()
		err = ctx.Err()
	}
	if err != nil {
		resp = nil
		if invocationDeadline(err, ctx, req.Context()) {
			// The executor's deadline ended the round trip: say so the way
			// the executor does.
			err = executor.ErrTimeout
		}
	}
	var verdict error
	if sent != nil && err != nil && sent.failed(err) {
		verdict = callersBody(err)
	} else {
		verdict = t.verdict(resp, err, l)
	}
	if resp == nil || !holdsSlot(req, resp) {
		if resp != nil {
			resp.Request = req
		}
		l.Done(verdict)
		return resp, err
	}
	resp.Request = req
	resp.Body = newBody(resp.Body, l, verdict, req.Context())
	return resp, nil
}

// roundTrip runs the base transport under executor.Guard: a panic there
// is the exchange's failure, and a base that ends the goroutine
// (runtime.Goexit) gives the slot back, recorded as a failure, before the
// Goexit goes on. A nil Body is http.NoBody, as http.Client makes it; a
// nil response with a nil error is an error of the base.
func (t *Transport) roundTrip(req *http.Request, l *executor.Lease) (*http.Response, error) {
	base := t.baseTransport()
	resp, err := breaker.Guard("fusehttp.Transport.Base", func() (*http.Response, error) { return base.RoundTrip(req) }, l.Done)
	switch {
	case err != nil:
		if _, ok := err.(*breaker.PanicError); ok {
			resp = nil
		}
	case resp == nil:
		err = fmt.Errorf("fusehttp: Transport.Base (%T) returned a nil *http.Response with a nil error", base)
	case resp.Body == nil:
		resp.Body = http.NoBody
	}
	return resp, err
}

// verdict runs the user's Classify under executor.Guard. A panic there is
// the exchange's failure; the response still goes to the caller, and its
// body is still looked after. A Classify that ends the goroutine
// (runtime.Goexit) is recorded the same way, once the response, which
// will never reach the caller, is closed.
func (t *Transport) verdict(resp *http.Response, err error, l *executor.Lease) error {
	classify := t.Classify
	if classify == nil {
		classify = DefaultClassify
	}
	v, perr := breaker.Guard("fusehttp.Transport.Classify", func() (error, error) { return classify(resp, err), nil },
		func(perr error) {
			if resp != nil {
				resp.Body.Close()
			}
			l.Done(perr)
		})
	if perr != nil {
		return perr
	}
	return v
}

// sentBody is a request body as the base reads it: it remembers an error
// of the body's own Read, so that a request that failed because its body
// did (an upload whose source broke) is told apart from one the supplier
// failed, without parsing the base's error. The bodies that GetBody returns
// for the base's retries report to the same sentBody.
type sentBody struct {
	first   bodyReader
	getBody func() (io.ReadCloser, error)
	cur     atomic.Pointer[bodyReader] // the body being sent: the last one GetBody gave
}

// bodyReader is one body of a sentBody.
type bodyReader struct {
	io.ReadCloser
	err atomic.Pointer[error] // the last error of a Read
}

func (r *bodyReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		failure := err // on the heap only when there is one
		r.err.Store(&failure)
	}
	return n, err
}

// sendBody wraps the body of req, which has one, and GetBody's.
func sendBody(req *http.Request) *sentBody {
	s := &sentBody{getBody: req.GetBody}
	s.first.ReadCloser = req.Body
	s.cur.Store(&s.first)
	req.Body = &s.first
	if req.GetBody != nil {
		req.GetBody = s.rewind
	}
	return s
}

// rewind is the request's GetBody, its body wrapped as the first one is.
// The new body is the one being sent from now on: an error an earlier
// attempt's body had says nothing of how the next attempt ends.
func (s *sentBody) rewind() (io.ReadCloser, error) {
	rc, err := s.getBody()
	if err != nil || rc == nil || rc == http.NoBody {
		return rc, err
	}
	b := &bodyReader{ReadCloser: rc}
	s.cur.Store(b)
	return b, nil
}

// failed reports whether err is (or wraps) an error of the Read of the
// body being sent.
func (s *sentBody) failed(err error) bool {
	p := s.cur.Load().err.Load()
	return p != nil && errors.Is(err, *p)
}

// mayFail reports whether the request body's Read can fail on the
// caller's side, so that it is worth wrapping: not for the readers
// http.NewRequest recognises (a *bytes.Reader, *bytes.Buffer or
// *strings.Reader inside io.NopCloser), which read from memory and which
// net/http sends with the headers in one write when it sees them, nor for
// a file, alone or under an io.LimitedReader, which net/http sends with
// sendfile.
func mayFail(body io.ReadCloser) bool {
	var r io.Reader = body
	if t := reflect.TypeOf(body); t == nopCloserType || t == nopCloserWriterToType {
		r = reflect.ValueOf(body).Field(0).Interface().(io.Reader)
	}
	if lr, ok := r.(*io.LimitedReader); ok {
		r = lr.R
	}
	switch r.(type) {
	case *bytes.Reader, *bytes.Buffer, *strings.Reader, *os.File:
		return false
	}
	return true
}

// The types io.NopCloser returns, as net/http tells them apart.
var (
	nopCloserType         = reflect.TypeOf(io.NopCloser(nil))
	nopCloserWriterToType = reflect.TypeOf(io.NopCloser(struct {
		io.Reader
		io.WriterTo
	}{}))
)

// callersBody is what the breaker records for an exchange that failed
// because reading the request's own body did: the caller's error, not the
// supplier's, ignored as a cancellation is.
func callersBody(err error) error {
	return fmt.Errorf("fusehttp: reading the request body failed on the caller's side (%w): %w", err, context.Canceled)
}

// holdsSlot reports whether the exchange goes on after the response
// arrives. A response that cannot have a body (to HEAD, 204, 304), or has
// an empty one (Content-Length: 0, http.NoBody) means the supplier is done
// already, so a caller that never closes it costs nothing. A 101 Switching
// Protocols body is a connection for as long as the new protocol lasts,
// not part of the exchange.
func holdsSlot(req *http.Request, resp *http.Response) bool {
	switch {
	case resp.Body == nil, resp.Body == http.NoBody, resp.ContentLength == 0, req.Method == http.MethodHead:
		return false
	case resp.StatusCode == http.StatusSwitchingProtocols,
		resp.StatusCode == http.StatusNoContent, resp.StatusCode == http.StatusNotModified:
		return false
	}
	return true
}

// body wraps a response body so that its end ends the lease, as net/http's
// own cancelTimerBody stops a client's timer: at EOF, at a read error, at
// Close, or at the lease's deadline (or the caller's cancellation), which
// also cut the body off. No goroutine waits for any of them.
type body struct {
	rc      io.ReadCloser
	lease   *executor.Lease
	caller  context.Context // the request's own
	verdict error           // Classify's, at the headers
	stop    func() bool     // stops watching the lease's context
	once    sync.Once
}

func newBody(rc io.ReadCloser, l *executor.Lease, verdict error, caller context.Context) *body {
	b := &body{rc: rc, lease: l, caller: caller, verdict: verdict}
	ctx := l.Context()
	// context.AfterFunc on the lease's context registers f with it, without
	// a goroutine until the context ends.
	b.stop = context.AfterFunc(ctx, func() { b.end(ctx.Err()) })
	return b
}

// Read reads the body. At EOF, or at an error that breaks the body, the
// exchange ends: Read returns once the slot has been released. A body cut
// off by the invocation deadline returns an error matching
// executor.ErrTimeout, as the round trip does, that wraps the base's.
func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		timedOut := invocationDeadline(err, b.lease.Context(), b.caller)
		b.finish(err)
		if timedOut {
			err = fmt.Errorf("%w: %w", executor.ErrTimeout, err)
		}
	}
	return n, err
}

// invocationDeadline reports whether the invocation deadline of the lease
// context lctx, not the caller's own context, ended with err a round trip
// or a body: err is a deadline, lctx ended at its deadline, and the
// caller's context has not ended, nor has a deadline as early as lctx's
// (lctx's is the earlier of the two, and when they are one instant, the
// executor's timer may fire before the caller's).
func invocationDeadline(err error, lctx, caller context.Context) bool {
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, executor.ErrTimeout) ||
		!errors.Is(lctx.Err(), context.DeadlineExceeded) || caller.Err() != nil {
		return false
	}
	d, _ := lctx.Deadline()
	cd, ok := caller.Deadline()
	return !ok || cd.After(d)
}

// Close closes the body, which returns its connection to the base
// transport, and then ends the exchange: when Close returns, the slot has
// been released, so a caller that closes and sends its next request at once
// never finds its own slot still held.
func (b *body) Close() error {
	err := b.rc.Close()
	b.finish(nil)
	return err
}

// finish is the end of the body on its reader's side: it also stops the
// watch of the lease's context.
func (b *body) finish(err error) {
	b.stop()
	b.end(err)
}

// end ends the lease once: with Classify's verdict, or with the error that
// broke the body if the response itself was a success.
func (b *body) end(err error) {
	b.once.Do(func() {
		v := b.verdict
		if v == nil && err != nil && err != io.EOF {
			v = fmt.Errorf("fusehttp: reading the response body: %w", err)
		}
		b.lease.Done(v)
	})
}
