package fusegrpc

import (
	"context"
	"errors"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/shed"
)

// ShedUnary returns a server interceptor that admits each unary call
// through s, the process's load shedder (package shed), before the
// handler runs. A refused call is answered ResourceExhausted at once, with
// the PushbackKey trailer set to s's RetryAfter in milliseconds. key, if
// not nil, names the call's tenant for the fair shares; it must return
// something the server trusts (an authenticated peer, not metadata the
// client sets freely). A key that panics fails the call with Internal.
// The priority is the one the context carries (package priority): chain
// TrustedPriorityUnary before it to believe the one a client sends.
func ShedUnary(s *shed.Shedder, key func(ctx context.Context, fullMethod string) string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		t, err := admit(ctx, s, key, info.FullMethod, func(md metadata.MD) { _ = grpc.SetTrailer(ctx, md) })
		if err != nil {
			return nil, err
		}
		defer t.Done()
		return handler(ctx, req)
	}
}

// ShedStream is ShedUnary for streams: a stream is admitted once, when it
// opens, and holds its place until its handler returns.
func ShedStream(s *shed.Shedder, key func(ctx context.Context, fullMethod string) string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		t, err := admit(ss.Context(), s, key, info.FullMethod, ss.SetTrailer)
		if err != nil {
			return err
		}
		defer t.Done()
		return handler(srv, ss)
	}
}

// admit asks s for a place for the call, and turns a refusal into its
// status and pushback trailer.
func admit(ctx context.Context, s *shed.Shedder, key func(context.Context, string) string, method string, setTrailer func(metadata.MD)) (shed.Ticket, error) {
	if s == nil || ctx == nil {
		return shed.Ticket{}, &Error{Code: codes.Internal, Err: errors.New("fusegrpc: the shedding interceptor needs a *shed.Shedder and a context")}
	}
	k := ""
	if key != nil {
		var err error
		if k, err = callShedKey(ctx, key, method); err != nil {
			return shed.Ticket{}, &Error{Code: codes.Internal, Err: err}
		}
	}
	t, err := s.AllowContext(ctx, k)
	if err != nil {
		var se *shed.ShedError
		if errors.As(err, &se) {
			setTrailer(metadata.Pairs(PushbackKey, strconv.FormatInt(int64(se.RetryAfter/time.Millisecond), 10)))
		}
		return shed.Ticket{}, &Error{Code: codes.ResourceExhausted, Err: err}
	}
	return t, nil
}

// callShedKey runs the user's key function under a recover.
func callShedKey(ctx context.Context, key func(context.Context, string) string, method string) (string, error) {
	return breaker.Guard("fusegrpc.ShedUnary key", func() (string, error) { return key(ctx, method), nil }, nil)
}
