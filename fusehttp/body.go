package fusehttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// exchange makes the round trip under the lease l. It ends the lease when
// the response has no body to wait for; otherwise the body ends it.
func (t *Transport) exchange(req *http.Request, l *executor.Lease) (*http.Response, error) {
	ctx := l.Context()
	resp, err := t.roundTrip(req.WithContext(ctx))
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
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil && req.Context().Err() == nil {
			// The executor's deadline ended the round trip: say so the way
			// the executor does.
			err = executor.ErrTimeout
		}
	}
	verdict := t.verdict(resp, err)
	if resp == nil || !holdsSlot(req, resp) {
		if resp != nil {
			resp.Request = req
		}
		l.Done(verdict)
		return resp, err
	}
	resp.Request = req
	resp.Body = newBody(resp.Body, l, verdict)
	return resp, nil
}

// roundTrip runs the base transport; a panic there becomes an
// *breaker.PanicError, recorded as the exchange's failure, as a panic in a
// submitted function is.
func (t *Transport) roundTrip(req *http.Request) (resp *http.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, &breaker.PanicError{Callback: "fusehttp.Transport.Base", Value: p, Stack: debug.Stack()}
		}
	}()
	return t.baseTransport().RoundTrip(req)
}

// verdict runs the user's Classify. A panic there is the exchange's failure
// (recorded with a *breaker.PanicError naming it); the response still
// goes to the caller, and its body is still looked after.
func (t *Transport) verdict(resp *http.Response, err error) (v error) {
	defer func() {
		if p := recover(); p != nil {
			v = &breaker.PanicError{Callback: "fusehttp.Transport.Classify", Value: p, Stack: debug.Stack()}
		}
	}()
	if t.Classify == nil {
		return DefaultClassify(resp, err)
	}
	return t.Classify(resp, err)
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
	verdict error       // Classify's, at the headers
	stop    func() bool // stops watching the lease's context
	once    sync.Once
}

func newBody(rc io.ReadCloser, l *executor.Lease, verdict error) *body {
	b := &body{rc: rc, lease: l, verdict: verdict}
	ctx := l.Context()
	// context.AfterFunc on the lease's context registers f with it, without
	// a goroutine until the context ends.
	b.stop = context.AfterFunc(ctx, func() { b.end(ctx.Err()) })
	return b
}

// Read reads the body. At EOF, or at an error that breaks the body, the
// exchange ends: Read returns once the slot has been released.
func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.finish(err)
	}
	return n, err
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
