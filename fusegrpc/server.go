package fusegrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// PushbackKey is the trailer a refused call carries: how many milliseconds
// the client should wait before it tries again. A grpc-go client with a
// retry policy honours it (gRFC A6), instead of its own backoff.
const PushbackKey = "grpc-retry-pushback-ms"

// Server admits a service's own gRPC calls through the executors of a
// Group, one bulkhead and breaker per method by default, and holds the
// slot until the handler returns. Install it with ServerOptions:
//
//	srv := grpc.NewServer((&fusegrpc.Server{Group: g}).ServerOptions()...)
//
// A refused call is answered at once, without its handler:
// ResourceExhausted when the slots are busy, Unavailable when the breaker
// is open or the group closed, with the PushbackKey trailer. A handler
// running past InvocationTimeout counts as a timeout; one that panics or
// calls runtime.Goexit, as a failure (docs/inbound.md). The fields are read
// on every call; set them before first use. A nil *Server, one without a
// Group, or a nil context fails each call with Internal.
type Server struct {
	// Group supplies one executor per key; its GroupConfig sets each
	// method's slots, deadline, breaker and critical share. Required.
	Group *executor.Group

	// Key names the executor of a call. nil means the full method name,
	// "/package.Service/Method". A Key that panics fails the call with
	// Internal, without calling the handler; one that returns "" serves
	// the call without a slot.
	Key func(ctx context.Context, fullMethod string) string

	// Classify turns a handler's error into the error the method's breaker
	// records. nil means every handler error is a success: the breaker of
	// an inbound method learns from saturation, overdue handlers and
	// panics, not from the answers the service chose to give. A Classify
	// that panics counts the call as a failure; one that ends its
	// goroutine (runtime.Goexit) gives the slot back all the same, counted
	// as a failure with a *breaker.PanicError naming it, and the Goexit
	// goes on.
	Classify func(err error) error

	// TrustPriority says whether to believe the priority a call's metadata
	// carries (priority.Header, lower-cased), as a client's Interceptor
	// sends it: for a call it returns true for (a peer of the service's
	// own network, an mTLS identity), the call and its handler run with
	// that priority. nil believes no one: a client cannot raise its own
	// priority. It runs before the call takes a slot; a panic there is
	// the call's Internal error.
	TrustPriority func(ctx context.Context) bool
}

// trusted returns ctx with the priority its metadata carries, if
// TrustPriority believes the caller.
func (s *Server) trusted(ctx context.Context) (context.Context, error) {
	return trustedPriority(ctx, s.TrustPriority, "fusegrpc.Server.TrustPriority")
}

// ServerOptions returns the options that install both interceptors,
// chained after any installed before them.
func (s *Server) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(s.Unary()),
		grpc.ChainStreamInterceptor(s.Stream()),
	}
}

// Unary returns the unary server interceptor.
func (s *Server) Unary() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if info == nil || handler == nil {
			return nil, errNoCall
		}
		ctx, l, err := s.lease(ctx, info.FullMethod)
		if err != nil {
			return nil, s.refuse(err, func(md metadata.MD) { _ = grpc.SetTrailer(ctx, md) })
		}
		if l == nil {
			return handler(ctx, req)
		}
		return serve(ctx, s, l, func() (any, error) { return handler(ctx, req) })
	}
}

// Stream returns the stream server interceptor. A stream holds its slot
// for as long as its handler runs.
func (s *Server) Stream() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if ss == nil || info == nil || handler == nil {
			return errNoCall
		}
		ctx, l, err := s.lease(ss.Context(), info.FullMethod)
		if err != nil {
			return s.refuse(err, ss.SetTrailer)
		}
		if ctx != ss.Context() {
			ss = &withContext{ss, ctx}
		}
		if l == nil {
			return handler(srv, ss)
		}
		_, err = serve(ctx, s, l, func() (struct{}, error) { return struct{}{}, handler(srv, ss) })
		return err
	}
}

// errNoCall answers an interceptor called without its call (a nil info,
// handler or stream), which grpc never does but a test calling it
// directly may.
var errNoCall = &Error{Code: codes.Internal, Err: errors.New("fusegrpc: a server interceptor called with a nil info, handler or stream")}

// lease takes a slot for the call, or returns nil for a call served
// without one. It checks the Server and the context before Key sees
// either.
func (s *Server) lease(ctx context.Context, method string) (context.Context, *executor.Lease, error) {
	switch {
	case s == nil:
		return ctx, nil, &Error{Code: codes.Internal, Err: errors.New("fusegrpc: the Server is a nil *Server")}
	case ctx == nil:
		return ctx, nil, &Error{Code: codes.Internal, Err: fmt.Errorf("fusegrpc: %s called with a nil context (use context.Background())", method)}
	case s.Group == nil:
		return ctx, nil, &Error{Code: codes.Internal, Err: errors.New("fusegrpc: Server.Group is nil")}
	}
	ctx, err := s.trusted(ctx)
	if err != nil {
		return ctx, nil, err
	}
	key := method
	if s.Key != nil {
		if key, err = s.key(ctx, method); err != nil {
			return ctx, nil, err
		}
		if key == "" {
			return ctx, nil, nil
		}
	}
	l, err := executor.LeaseIn(ctx, s.Group, key)
	return ctx, l, err
}

// withContext is a server stream whose handler sees ctx: the stream's own
// with a priority TrustPriority believed.
type withContext struct {
	grpc.ServerStream
	ctx context.Context
}

func (w *withContext) Context() context.Context { return w.ctx }

func (s *Server) key(ctx context.Context, method string) (string, error) {
	key, err := breaker.Guard("fusegrpc.Server.Key", func() (string, error) { return s.Key(ctx, method), nil }, nil)
	if err != nil {
		return "", &Error{Code: codes.Internal, Err: err}
	}
	return key, nil
}

// serve runs the handler in the slot of l under executor.Guard and ends
// the lease with its outcome: its error as Classify judges it (a client
// that went away is ignored by the breaker); a panic, a failure, which
// goes on to grpc; a Goexit, a failure unless the client had gone.
func serve[T any](ctx context.Context, s *Server, l *executor.Lease, handler func() (T, error)) (T, error) {
	v, err := breaker.Guard("handler", handler, func(perr error) {
		if cerr := ctx.Err(); cerr != nil {
			perr = cerr
		}
		l.Done(perr)
	})
	if perr, ok := err.(*breaker.PanicError); ok && perr.Callback == "handler" {
		l.Done(perr)
		panic(perr.Value)
	}
	if s.Classify == nil {
		l.Done(ctx.Err()) // nil, or the client went away: ignored
		return v, err
	}
	l.Finish(err, func(err error) error {
		if v := s.Classify(err); v != nil || ctx.Err() == nil {
			return v
		}
		return ctx.Err()
	}, "fusegrpc.Server.Classify")
	return v, err
}

// refuse turns a refusal into the call's status, and sets the pushback
// trailer with setTrailer when the executor knows a time.
func (s *Server) refuse(err error, setTrailer func(metadata.MD)) error {
	var re *executor.RejectedError
	if !errors.As(err, &re) {
		// A bad or unlisted key, a Key that panicked: the service's own
		// fault, whose details (panic text, configured names) stay in the
		// log.
		slog.Error("fusegrpc: Server could not admit a call", "error", err)
		return &Error{Code: codes.Internal, Err: &remote{"fusegrpc: internal error", err}}
	}
	if d := re.RetryAfter(); d > 0 {
		setTrailer(metadata.Pairs(PushbackKey, strconv.FormatInt(int64(d/time.Millisecond), 10)))
	}
	c := codes.Unavailable
	if re.Reason == executor.RejectedBusy {
		c = codes.ResourceExhausted
	}
	return &Error{Code: c, Err: &remote{"fusegrpc: the service refused the call (" + re.Reason.String() + "); retry later", err}}
}

// remote is the error a remote client reads: a fixed message, with the
// error it stands for kept for errors.Is and the server's logs.
type remote struct {
	msg string
	err error
}

func (r *remote) Error() string { return r.msg }
func (r *remote) Unwrap() error { return r.err }
