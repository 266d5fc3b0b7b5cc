package fusehttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/fusebox-go/fusebox/executor"
)

// result is what the call hands to RoundTrip's caller.
type result struct {
	resp *http.Response
	err  error
}

// Who owns the request and the response, as the exchange goes.
const (
	idle      = iota // submitted; the call has not started: the caller owns req.Body
	started          // the call passed req to the base transport, which owns req.Body now
	delivered        // the response (or error) is in sent: the caller owns it
	abandoned        // the caller left first: the call closes any response itself
)

// exchange is one request's trip through its executor. The protected
// function (run) makes the round trip, hands the response over, and then,
// still holding the slot, waits for the body to be closed or read to the end.
type exchange struct {
	req      *http.Request
	base     http.RoundTripper
	classify func(*http.Response, error) error
	sent     chan result // capacity 1: deliver never blocks

	// settled is the future's Done channel: it closes once the call has
	// returned and released its slot (or at the invocation timeout, if that
	// came first). Set by RoundTrip before the response can reach anyone.
	settled <-chan struct{}
	// bodyDone receives the end of the body: nil for Close or EOF, or the
	// read error that broke it. Capacity 1, sent to at most once.
	bodyDone chan error

	mu    sync.Mutex
	state int
}

// run is the protected function. Its error is what the breaker records
// (the verdict of Classify); the caller gets the response through sent.
func (x *exchange) run(ctx context.Context) (struct{}, error) {
	x.mu.Lock()
	if x.state == abandoned {
		// The caller gave up before the call started and closed req.Body:
		// nothing was sent.
		x.mu.Unlock()
		return struct{}{}, ctx.Err()
	}
	x.state = started
	x.mu.Unlock()

	resp, err := x.base.RoundTrip(x.req.WithContext(ctx))
	if err != nil {
		resp = nil
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// The executor's deadline (or the caller's, if earlier) ended
			// the round trip: say so the way the executor does.
			err = executor.ErrTimeout
		}
	}
	verdict := x.verdict(resp, err)

	var b *body
	if resp != nil {
		resp.Request = x.req
		if holdsSlot(x.req, resp) {
			x.bodyDone = make(chan error, 1)
			b = &body{rc: resp.Body, x: x}
			resp.Body = b
		}
	}
	if !x.deliver(result{resp, err}) {
		// The caller left (cancelled, or timed out): nobody else will ever
		// close this body.
		if b != nil {
			b.rc.Close()
		} else if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		return struct{}{}, verdict
	}
	if b == nil {
		return struct{}{}, verdict // no body to wait for: the exchange is over
	}
	// Keep the slot until the caller is done with the body, or the call's
	// context ends: the invocation timeout (which the executor has already
	// recorded as a failure; the base transport aborts the body) or the
	// caller's cancellation (recorded as ignored).
	select {
	case rerr := <-x.bodyDone:
		if verdict == nil && rerr != nil {
			verdict = fmt.Errorf("fusehttp: reading the response body: %w", rerr)
		}
		return struct{}{}, verdict
	case <-ctx.Done():
		return struct{}{}, ctx.Err()
	}
}

// verdict runs the user's Classify. A panic there is the call's failure
// (recorded with an *executor.PanicError naming it); the response still
// goes to the caller, and its body is still looked after.
func (x *exchange) verdict(resp *http.Response, err error) (v error) {
	defer func() {
		if p := recover(); p != nil {
			v = &executor.PanicError{Callback: "fusehttp.Transport.Classify", Value: p, Stack: debug.Stack()}
		}
	}()
	return x.classify(resp, err)
}

// holdsSlot reports whether the exchange goes on after the response
// arrives. A response that cannot have a body (to HEAD, 204, 304), or has
// an empty one (Content-Length: 0, http.NoBody) means the upstream is done
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

// deliver hands r to the caller, unless the caller has left.
func (x *exchange) deliver(r result) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.state == abandoned {
		return false
	}
	x.state = delivered
	x.sent <- r
	return true
}

// abandon is the caller leaving without a response. If one was delivered
// meanwhile, it returns it after all. If the call never started, the
// request body was never handed to the base transport, so abandon closes
// it.
func (x *exchange) abandon() (result, bool) {
	x.mu.Lock()
	prev := x.state
	if prev != delivered {
		x.state = abandoned
	}
	x.mu.Unlock()
	switch prev {
	case delivered:
		return <-x.sent, true
	case idle:
		closeBody(x.req)
	}
	return result{}, false
}

func isExchangeBody(rc io.ReadCloser) bool {
	_, ok := rc.(*body)
	return ok
}

// body wraps a response body so that its end frees the exchange's slot.
type body struct {
	rc   io.ReadCloser
	x    *exchange
	once sync.Once
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

func (b *body) finish(err error) {
	b.once.Do(func() {
		if err == io.EOF {
			err = nil
		}
		b.x.bodyDone <- err
		<-b.x.settled
	})
}
