package fusegrpc_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusegrpc"
	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
)

// A client's priority crosses the hop in metadata, and the server believes
// it only when TrustPriority says so.
func TestPriorityCrossesTheHopOnlyForTrustedPeers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var trusted atomic.Bool
		var seen atomic.Int32
		s := &fusegrpc.Server{Group: newGroup(t, executor.GroupConfig{Default: defaults()}),
			TrustPriority: func(context.Context) bool { return trusted.Load() },
			Key: func(ctx context.Context, method string) string {
				seen.Store(int32(priority.From(ctx)))
				return method
			}}
		srv := grpc.NewServer(s.ServerOptions()...)
		testpb.RegisterTestServiceServer(srv, &service{})
		addr := serve(t, srv)
		client := dial(t, addr, &fusegrpc.Interceptor{Group: newGroup(t, executor.GroupConfig{Default: defaults()})})

		call := func(p priority.Priority) priority.Priority {
			t.Helper()
			_, err := client.UnaryCall(priority.With(t.Context(), p), &testpb.SimpleRequest{})
			require.NoError(t, err)
			return priority.Priority(seen.Load())
		}
		assert.Equal(t, priority.Default, call(priority.Critical), "an untrusted client cannot raise its priority")
		trusted.Store(true)
		assert.Equal(t, priority.Critical, call(priority.Critical))
		assert.Equal(t, priority.Sheddable, call(priority.Sheddable))
		assert.Equal(t, priority.Default, call(priority.Default))

		// The stream's handler sees it too.
		stream, err := client.StreamingInputCall(priority.With(t.Context(), priority.Sheddable))
		require.NoError(t, err)
		_, err = stream.CloseAndRecv()
		require.NoError(t, err)
		assert.Equal(t, priority.Sheddable, priority.Priority(seen.Load()))
	})
}

// The server receives the call's priority once, whatever the call's own
// metadata said under the key: the same value, another, or one twice.
func TestPriorityIsSaidOnceOnTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got atomic.Pointer[[]string]
		srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any,
			_ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			vals := metadata.ValueFromIncomingContext(ctx, "fusebox-priority")
			got.Store(&vals)
			return handler(ctx, req)
		}))
		testpb.RegisterTestServiceServer(srv, &service{})
		client := dial(t, serve(t, srv), &fusegrpc.Interceptor{Group: newGroup(t, executor.GroupConfig{Default: defaults()})})
		for _, c := range []struct {
			name string
			own  []string // the call's own values under the key
			p    priority.Priority
		}{
			{"none of its own", nil, priority.Critical},
			{"the same of its own", []string{"critical"}, priority.Critical},
			{"another of its own", []string{"critical"}, priority.Sheddable},
			{"the same twice", []string{"sheddable", "sheddable"}, priority.Sheddable},
		} {
			ctx := priority.With(t.Context(), c.p)
			for _, v := range c.own {
				ctx = metadata.AppendToOutgoingContext(ctx, "fusebox-priority", v)
			}
			_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{})
			require.NoError(t, err, c.name)
			assert.Equal(t, []string{c.p.String()}, *got.Load(), c.name)
		}
	})
}

// The shedder reads a call's priority from its context: chained after
// TrustedPriorityUnary (or Stream) it sees the priority a trusted client
// sent, and the default from anyone else.
func TestTrustedPriorityReachesTheShedder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var trusted atomic.Bool
		var seen atomic.Int32
		sh, err := shed.New(shed.Config{})
		require.NoError(t, err)
		t.Cleanup(func() { sh.Close() })
		key := func(ctx context.Context, _ string) string {
			seen.Store(int32(priority.From(ctx)))
			return ""
		}
		trust := func(context.Context) bool { return trusted.Load() }
		srv := grpc.NewServer(
			grpc.ChainUnaryInterceptor(fusegrpc.TrustedPriorityUnary(trust), fusegrpc.ShedUnary(sh, key)),
			grpc.ChainStreamInterceptor(fusegrpc.TrustedPriorityStream(trust), fusegrpc.ShedStream(sh, key)))
		testpb.RegisterTestServiceServer(srv, &service{})
		client := dial(t, serve(t, srv), &fusegrpc.Interceptor{Group: newGroup(t, executor.GroupConfig{Default: defaults()})})

		unary := func(p priority.Priority) priority.Priority {
			t.Helper()
			_, err := client.UnaryCall(priority.With(t.Context(), p), &testpb.SimpleRequest{})
			require.NoError(t, err)
			return priority.Priority(seen.Load())
		}
		stream := func(p priority.Priority) priority.Priority {
			t.Helper()
			s, err := client.StreamingInputCall(priority.With(t.Context(), p))
			require.NoError(t, err)
			_, err = s.CloseAndRecv()
			require.NoError(t, err)
			return priority.Priority(seen.Load())
		}
		assert.Equal(t, priority.Default, unary(priority.Critical), "an untrusted client cannot raise its priority")
		assert.Equal(t, priority.Default, stream(priority.Critical))
		trusted.Store(true)
		assert.Equal(t, priority.Critical, unary(priority.Critical))
		assert.Equal(t, priority.Sheddable, unary(priority.Sheddable))
		assert.Equal(t, priority.Critical, stream(priority.Critical))
	})
}

// A trust predicate that panics fails the call with Internal, before the
// handler runs.
func TestTrustedPriorityThatPanicsFailsTheCall(t *testing.T) {
	ic := fusegrpc.TrustedPriorityUnary(func(context.Context) bool { panic("no peer") })
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(priority.Header, "critical"))
	called := false
	_, err := ic(ctx, nil, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) { called = true; return nil, nil })
	assert.Equal(t, codes.Internal, status.Code(err))
	assert.False(t, called)
	_, err = fusegrpc.TrustedPriorityUnary(nil)(ctx, nil, &grpc.UnaryServerInfo{}, nil)
	assert.Equal(t, codes.Internal, status.Code(err), "a nil handler")
}
