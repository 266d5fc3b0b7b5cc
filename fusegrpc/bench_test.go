package fusegrpc_test

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusegrpc"
)

// BenchmarkInterceptors is the per-call cost of the interceptors over an
// invoker and a streamer that answer from memory, without a connection: a
// unary call, and a server stream opened and read to its end.
func BenchmarkInterceptors(b *testing.B) {
	g, err := executor.NewGroup(executor.GroupConfig{Default: executor.Config{Slots: 1000}})
	require.NoError(b, err)
	b.Cleanup(func() { g.Close(context.Background()) })
	ic := &fusegrpc.Interceptor{Group: g, Key: func(context.Context, string, *grpc.ClientConn) string { return "k" }}
	ctx := context.Background()
	b.Run("unary", func(b *testing.B) {
		unary := ic.Unary()
		invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
		b.ReportAllocs()
		for b.Loop() {
			if err := unary(ctx, "/s/m", nil, nil, nil, invoker); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stream", func(b *testing.B) {
		stream := ic.Stream()
		desc := &grpc.StreamDesc{ServerStreams: true}
		streamer := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
			return &memStream{ctx: ctx}, nil
		}
		b.ReportAllocs()
		for b.Loop() {
			cs, err := stream(ctx, desc, nil, "/s/m", streamer)
			if err != nil {
				b.Fatal(err)
			}
			if err := cs.RecvMsg(nil); err != io.EOF {
				b.Fatal(err)
			}
		}
	})
}
