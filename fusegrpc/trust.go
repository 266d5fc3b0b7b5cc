package fusegrpc

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/priority"
)

// TrustedPriorityUnary returns a server interceptor that runs the call
// with the priority its metadata carries (priority.Header, lower-cased)
// when trust believes the caller, and with its context's own otherwise.
// Chain it before ShedUnary, which reads the priority from the context:
//
//	grpc.ChainUnaryInterceptor(fusegrpc.TrustedPriorityUnary(trust), fusegrpc.ShedUnary(sh, nil))
//
// trust runs only for calls that carry a priority; a trust that panics
// fails the call with Internal. A nil trust believes no one.
func TrustedPriorityUnary(trust func(ctx context.Context) bool) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if handler == nil {
			return nil, errNoCall
		}
		ctx, err := trustedPriority(ctx, trust, "fusegrpc.TrustedPriorityUnary trust")
		if err != nil {
			return nil, &Error{Code: codes.Internal, Err: err}
		}
		return handler(ctx, req)
	}
}

// TrustedPriorityStream is TrustedPriorityUnary for streams: the stream's
// handler and the interceptors after it see the trusted priority in the
// stream's context.
func TrustedPriorityStream(trust func(ctx context.Context) bool) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if ss == nil || handler == nil {
			return errNoCall
		}
		ctx, err := trustedPriority(ss.Context(), trust, "fusegrpc.TrustedPriorityStream trust")
		if err != nil {
			return &Error{Code: codes.Internal, Err: err}
		}
		if ctx != ss.Context() {
			ss = &withContext{ss, ctx}
		}
		return handler(srv, ss)
	}
}

// trustedPriority returns ctx with the priority its metadata carries, if
// trust (named name in a panic's error) believes the caller. An unknown
// value leaves the priority as it was.
func trustedPriority(ctx context.Context, trust func(context.Context) bool, name string) (context.Context, error) {
	if ctx == nil {
		return nil, errors.New("fusegrpc: a call with a nil context")
	}
	if trust == nil {
		return ctx, nil
	}
	vals := metadata.ValueFromIncomingContext(ctx, priorityKey)
	if len(vals) == 0 {
		return ctx, nil
	}
	ok, err := breaker.Guard(name, func() (bool, error) { return trust(ctx), nil }, nil)
	if err != nil {
		return ctx, err
	}
	if p, perr := priority.Parse(vals[0]); ok && perr == nil {
		ctx = priority.With(ctx, p)
	}
	return ctx, nil
}
