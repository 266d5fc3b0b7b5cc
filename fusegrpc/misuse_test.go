package fusegrpc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusegrpc"
)

// An Error built by hand, or a nil *Error returned as an error, prints,
// unwraps and converts to a status without panicking in the caller's log
// line or in status.FromError.
func TestAnErrorWithoutACauseSaysSo(t *testing.T) {
	zero := &fusegrpc.Error{}
	assert.Equal(t, "rpc error: code = OK desc = fusegrpc: an Error with a nil Err", zero.Error())
	assert.NoError(t, errors.Unwrap(zero))

	var nilErr *fusegrpc.Error
	var err error = nilErr // not nil: a typed nil
	assert.Equal(t, "rpc error: code = Unknown desc = fusegrpc: a nil *Error", err.Error())
	assert.NoError(t, errors.Unwrap(err))
	assert.False(t, errors.Is(err, executor.ErrTimeout))
	assert.Equal(t, codes.Unknown, status.Code(err))
	assert.Equal(t, "fusegrpc: a nil *Error", status.Convert(err).Message())
}

// A call with a nil context, or through a nil *Interceptor or *Server, or
// without a connection for the default Key, fails with an Internal error
// saying which, on the client and the server side alike, without running
// anything or panicking on the caller's goroutine.
func TestMisuseIsAnErrorNotAPanic(t *testing.T) {
	g := newGroup(t, executor.GroupConfig{Default: defaults()})
	key := func(context.Context, string, *grpc.ClientConn) string { return "k" }
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		t.Error("the call was sent")
		return nil
	}
	streamer := func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
		t.Error("the stream was opened")
		return nil, nil
	}
	client := func(t *testing.T, ic *fusegrpc.Interceptor, ctx context.Context, want string) {
		t.Helper()
		err := ic.Unary()(ctx, "/s/M", nil, nil, nil, invoker)
		require.Equal(t, codes.Internal, code(err), "got %v", err)
		assert.ErrorContains(t, err, want)
		cs, err := ic.Stream()(ctx, &grpc.StreamDesc{ServerStreams: true}, nil, "/s/M", streamer)
		require.Equal(t, codes.Internal, code(err), "got %v", err)
		assert.ErrorContains(t, err, want)
		assert.Nil(t, cs)
	}
	t.Run("a client call with a nil context", func(t *testing.T) {
		client(t, &fusegrpc.Interceptor{Group: g, Key: key}, nil, "/s/M called with a nil context")
	})
	t.Run("a nil *Interceptor", func(t *testing.T) {
		var ic *fusegrpc.Interceptor
		require.Len(t, ic.DialOptions(), 2)
		client(t, ic, context.Background(), "a nil *Interceptor")
	})
	t.Run("the default Key without a connection", func(t *testing.T) {
		client(t, &fusegrpc.Interceptor{Group: g}, context.Background(), "no key for /s/M, which has a nil *grpc.ClientConn")
		assert.Empty(t, g.Names(), "no executor was made")
	})
	t.Run("the keys of a nil connection are empty", func(t *testing.T) {
		ctx := context.Background()
		assert.Empty(t, fusegrpc.Target(ctx, "/s/M", nil))
		assert.Empty(t, fusegrpc.Service(ctx, "/s/M", nil))
		assert.Empty(t, fusegrpc.Method(ctx, "/s/M", nil))
	})
	handler := func(context.Context, any) (any, error) {
		t.Error("the handler ran")
		return nil, nil
	}
	server := func(t *testing.T, s *fusegrpc.Server, ctx context.Context, want string) {
		t.Helper()
		_, err := s.Unary()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/s/M"}, handler)
		require.Equal(t, codes.Internal, code(err), "got %v", err)
		assert.ErrorContains(t, errors.Unwrap(errors.Unwrap(err)), want, "the cause, for the server's log")
		assert.NotContains(t, err.Error(), want, "the client reads no details")
		err = s.Stream()(nil, &serverStream{ctx: ctx}, &grpc.StreamServerInfo{FullMethod: "/s/M"},
			func(any, grpc.ServerStream) error { t.Error("the handler ran"); return nil })
		require.Equal(t, codes.Internal, code(err), "got %v", err)
		assert.ErrorContains(t, errors.Unwrap(errors.Unwrap(err)), want, "the cause, for the server's log")
	}
	t.Run("a server call with a nil context", func(t *testing.T) {
		server(t, &fusegrpc.Server{Group: g}, nil, "/s/M called with a nil context")
	})
	t.Run("a nil *Server", func(t *testing.T) {
		var s *fusegrpc.Server
		require.Len(t, s.ServerOptions(), 2)
		server(t, s, context.Background(), "a nil *Server")
	})
	t.Run("a server interceptor called without its call", func(t *testing.T) {
		s := &fusegrpc.Server{Group: g}
		ctx := context.Background()
		info := &grpc.UnaryServerInfo{FullMethod: "/s/M"}
		sinfo := &grpc.StreamServerInfo{FullMethod: "/s/M"}
		stream := func(any, grpc.ServerStream) error { t.Error("the handler ran"); return nil }
		for name, call := range map[string]func() error{
			"unary, no info":     func() error { _, err := s.Unary()(ctx, nil, nil, handler); return err },
			"unary, no handler":  func() error { _, err := s.Unary()(ctx, nil, info, nil); return err },
			"stream, no stream":  func() error { return s.Stream()(nil, nil, sinfo, stream) },
			"stream, no info":    func() error { return s.Stream()(nil, &serverStream{ctx: ctx}, nil, stream) },
			"stream, no handler": func() error { return s.Stream()(nil, &serverStream{ctx: ctx}, sinfo, nil) },
		} {
			err := call()
			require.Equal(t, codes.Internal, code(err), "%s: got %v", name, err)
			assert.ErrorContains(t, err, "nil info, handler or stream", name)
		}
		assert.Empty(t, g.Names(), "no executor was made")
	})
}
