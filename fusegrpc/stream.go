package fusegrpc

import (
	"context"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Stream returns the streaming client interceptor. A stream the executor
// refuses fails at once with an *Error of code Unavailable, without being
// opened. An admitted stream holds its slot (an executor.Lease) until it
// ends: RecvMsg returns an error (io.EOF included), or its single response
// for a stream without server streaming; SendMsg or Header fails; the
// caller's context is cancelled; or the executor's InvocationTimeout
// passes, which therefore bounds the whole stream (the stream is then
// cancelled, and the call that sees it fails with an *Error of code
// DeadlineExceeded wrapping executor.ErrTimeout, as a unary call does). A
// streamer (the next interceptor) that panics or ends the goroutine
// (runtime.Goexit) gives the slot back, counted as a failure with a
// *breaker.PanicError naming it. An open stream costs no goroutine of
// the library's. A stream whose caller neither reads it to the end nor
// cancels its context holds its slot until that timeout, as the grpc
// package's own rules for ending a stream say it must not.
func (i *Interceptor) Stream() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		key, err := i.key(ctx, method, cc)
		if err != nil {
			return nil, err
		}
		l, err := executor.LeaseIn(ctx, i.Group, key)
		if err != nil {
			return nil, statusOf(ctx, err)
		}
		// The stream lives on the lease's context, which ends at the
		// invocation deadline, when the caller cancels, or at the lease's
		// end.
		lctx := l.Context()
		cs, err := open(withPriority(lctx, i.PriorityKey), l, streamer, desc, cc, method, opts)
		if err != nil {
			if _, ok := err.(*breaker.PanicError); ok {
				l.Done(err)
				return nil, statusOf(ctx, err)
			}
			i.done(l, err)
			return nil, err
		}
		w := &clientStream{ClientStream: cs, desc: desc, i: i, lease: l, ctx: ctx}
		// Registered with the lease's context, without a goroutine until it
		// ends: a stream its caller abandons ends the lease at the deadline.
		w.stop = context.AfterFunc(lctx, func() { w.end(lctx.Err(), false) })
		return w, nil
	}
}

// open runs the streamer under executor.Guard: a panic there becomes a
// *breaker.PanicError, and a streamer that ends the goroutine
// (runtime.Goexit) gives the slot of l back, recorded as a failure, before
// the Goexit goes on.
func open(ctx context.Context, l *executor.Lease, streamer grpc.Streamer, desc *grpc.StreamDesc, cc *grpc.ClientConn,
	method string, opts []grpc.CallOption) (grpc.ClientStream, error) {
	return breaker.Guard("grpc.Streamer", func() (grpc.ClientStream, error) {
		return streamer(ctx, desc, cc, method, opts...)
	}, l.Done)
}

// clientStream watches a stream for its end, which ends the lease.
type clientStream struct {
	grpc.ClientStream
	desc  *grpc.StreamDesc
	i     *Interceptor
	lease *executor.Lease
	ctx   context.Context // the caller's
	stop  func() bool     // stops watching the lease's context
	once  sync.Once
}

// SendMsg sends a message. io.EOF means the stream has ended on the
// server's side; its status comes from RecvMsg, so the stream is not over
// for the caller yet. Any other error is the stream's final status.
func (w *clientStream) SendMsg(m any) error {
	err := w.ClientStream.SendMsg(m)
	if err != nil && err != io.EOF {
		w.finish(err)
		return w.timedOut(err)
	}
	return err
}

// RecvMsg receives a message. An error (io.EOF for a stream that ended
// well) ends the stream, and so does the one response of a stream without
// server streaming.
func (w *clientStream) RecvMsg(m any) error {
	err := w.ClientStream.RecvMsg(m)
	if err != nil || !w.desc.ServerStreams {
		w.finish(err)
	}
	return w.timedOut(err)
}

// Header returns the header metadata; an error means the stream has ended.
func (w *clientStream) Header() (metadata.MD, error) {
	md, err := w.ClientStream.Header()
	if err != nil {
		w.finish(err)
	}
	return md, w.timedOut(err)
}

// timedOut is the error the caller gets for a stream that ended with err:
// the *Error a unary call gets at its invocation timeout (DeadlineExceeded,
// wrapping executor.ErrTimeout) when the invocation deadline ended the
// stream, not the caller's own context or a DeadlineExceeded of the
// server's own; err itself otherwise. The deadline ended it when grpc
// says DeadlineExceeded, the caller's context has not ended and its
// deadline, if any, is later, and the lease's deadline has passed by the
// clock, whatever the executor's timeline has done yet.
func (w *clientStream) timedOut(err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	// The cheap tests first: status.Code allocates for most errors.
	d, ok := w.lease.Context().Deadline()
	if !ok || time.Now().Before(d) {
		return err // not the invocation deadline: the server's own, say
	}
	if cd, ok := w.ctx.Deadline(); ok && !cd.After(d) || w.ctx.Err() != nil {
		return err // the caller's own deadline, or its cancellation
	}
	if status.Code(err) != codes.DeadlineExceeded {
		return err
	}
	return &Error{Code: codes.DeadlineExceeded, Err: executor.ErrTimeout}
}

// finish ends the stream on its caller's side and returns once the slot has
// been released, so that a caller who opens its next stream right after
// never finds its own slot still held.
func (w *clientStream) finish(err error) {
	w.stop()
	w.end(err, true)
}

// end ends the lease once: with the stream's final error, classified (io.EOF
// is a success), or with the lease context's own end (the deadline, whose
// timeout is recorded already, or the caller's cancellation, ignored).
func (w *clientStream) end(err error, classify bool) {
	w.once.Do(func() {
		if err == io.EOF {
			err = nil
		}
		if !classify {
			w.lease.Done(err)
			return
		}
		w.i.done(w.lease, err)
	})
}
