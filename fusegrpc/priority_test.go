package fusegrpc_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusegrpc"
	"github.com/fusebox-go/fusebox/priority"
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
