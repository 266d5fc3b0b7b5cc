package fusegrpc

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/fusebox-go/fusebox/executor"
)

// Stream returns the streaming client interceptor. A stream the executor
// refuses fails at once with an *Error of code Unavailable, without being
// opened. An admitted stream holds its slot until it ends: RecvMsg returns
// an error (io.EOF included), or its single response for a stream without
// server streaming; SendMsg or Header fails; the caller's context is
// cancelled; or the executor's InvocationTimeout passes, which therefore
// bounds the whole stream (the stream is then cancelled with
// DeadlineExceeded). A stream whose caller neither reads it to the end nor
// cancels its context holds its slot until that timeout, as the grpc
// package's own rules for ending a stream say it must not.
func (i *Interceptor) Stream() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		key, err := i.key(ctx, method, cc)
		if err != nil {
			return nil, err
		}
		s := &streamCall{
			i: i, desc: desc, cc: cc, method: method, streamer: streamer, opts: opts,
			sent: make(chan opened, 1), ended: make(chan error, 1),
		}
		f, err := executor.SubmitIn(ctx, i.Group, key, s.run)
		if err != nil {
			return nil, statusOf(ctx, err)
		}
		s.settled = f.Done()

		var (
			r     opened
			got   bool
			ended error
		)
		select {
		case r = <-s.sent:
			got = true
		case <-f.Done():
			_, ended = f.Await(context.Background())
		case <-ctx.Done():
			ended = ctx.Err()
		}
		if !got {
			// The call ended (or the caller left) without handing a stream
			// over; settle with the call's side, which may be delivering now.
			if r, got = s.abandon(); !got {
				if ended == nil {
					ended = errors.New("fusegrpc: the call ended without a stream") // not reached
				}
				return nil, statusOf(ctx, ended)
			}
		}
		if r.err != nil {
			// The stream never opened and the call returns right after
			// saying so: once its slot is free, a caller who retries at
			// once does not find it still held.
			<-f.Done()
			return nil, r.err
		}
		return r.cs, nil
	}
}

// opened is what the call hands to the caller: a stream or the error that
// kept it from opening.
type opened struct {
	cs  grpc.ClientStream
	err error
}

// Who owns the stream, as the call goes.
const (
	idle      = iota // submitted; the call has not started
	started          // the call is opening the stream
	delivered        // the stream (or error) is in sent: the caller owns it
	abandoned        // the caller left first: the stream ends with the call
)

// streamCall is one stream's trip through its executor. The protected
// function (run) opens the stream, hands it over, and then, still holding
// the slot, waits for the stream to end.
type streamCall struct {
	i        *Interceptor
	desc     *grpc.StreamDesc
	cc       *grpc.ClientConn
	method   string
	streamer grpc.Streamer
	opts     []grpc.CallOption

	sent  chan opened // capacity 1: deliver never blocks
	ended chan error  // capacity 1: the stream's end, sent once by the caller's side
	// settled is the future's Done channel: it closes once the call has
	// returned and released its slot. Set before the stream reaches anyone.
	settled <-chan struct{}

	mu    sync.Mutex
	state int
}

// run is the protected function. Its error is what the breaker records.
func (s *streamCall) run(ctx context.Context) (struct{}, error) {
	s.mu.Lock()
	if s.state == abandoned {
		s.mu.Unlock()
		return struct{}{}, ctxErr(ctx)
	}
	s.state = started
	s.mu.Unlock()

	// The stream lives on ctx: the call's context, which ends at the
	// invocation deadline, when the caller cancels, or when run returns.
	cs, err := s.streamer(ctx, s.desc, s.cc, s.method, s.opts...)
	if err != nil {
		s.deliver(opened{err: err})
		return struct{}{}, s.i.classify(err)
	}
	if !s.deliver(opened{cs: &clientStream{ClientStream: cs, s: s}}) {
		// The caller left: returning cancels the stream.
		return struct{}{}, ctxErr(ctx)
	}
	select {
	case err := <-s.ended:
		return struct{}{}, s.i.classify(err)
	case <-ctx.Done():
		return struct{}{}, ctx.Err()
	}
}

// ctxErr is the error of a call whose caller left: its context's, which
// has ended by then.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.Canceled
}

// deliver hands r to the caller, unless the caller has left.
func (s *streamCall) deliver(r opened) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == abandoned {
		return false
	}
	s.state = delivered
	s.sent <- r
	return true
}

// abandon is the caller leaving without a stream; if one was delivered
// meanwhile, it returns it after all.
func (s *streamCall) abandon() (opened, bool) {
	s.mu.Lock()
	prev := s.state
	if prev != delivered {
		s.state = abandoned
	}
	s.mu.Unlock()
	if prev == delivered {
		return <-s.sent, true
	}
	return opened{}, false
}

// clientStream watches a stream for its end, which frees the call's slot.
type clientStream struct {
	grpc.ClientStream
	s    *streamCall
	once sync.Once
}

// SendMsg sends a message. io.EOF means the stream has ended on the
// server's side; its status comes from RecvMsg, so the stream is not over
// for the caller yet. Any other error is the stream's final status.
func (w *clientStream) SendMsg(m any) error {
	err := w.ClientStream.SendMsg(m)
	if err != nil && err != io.EOF {
		w.finish(err)
	}
	return err
}

// RecvMsg receives a message. An error (io.EOF for a stream that ended
// well) ends the stream, and so does the one response of a stream without
// server streaming.
func (w *clientStream) RecvMsg(m any) error {
	err := w.ClientStream.RecvMsg(m)
	if err != nil || !w.s.desc.ServerStreams {
		w.finish(err)
	}
	return err
}

// Header returns the header metadata; an error means the stream has ended.
func (w *clientStream) Header() (metadata.MD, error) {
	md, err := w.ClientStream.Header()
	if err != nil {
		w.finish(err)
	}
	return md, err
}

// finish ends the call with the stream's final error (io.EOF is success)
// and returns once the slot has been released, so that a caller who opens
// its next stream right after never finds its own slot still held.
func (w *clientStream) finish(err error) {
	w.once.Do(func() {
		if err == io.EOF {
			err = nil
		}
		w.s.ended <- err
		<-w.s.settled
	})
}
