package fusegrpc_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
	"github.com/fusebox-go/fusebox/fusegrpc"
)

// fakeService is a gRPC service whose UnaryCall answers as a
// fuseboxtest.Fake says: the way a user fakes a gRPC supplier with the
// test kit, which needs no gRPC itself.
type fakeService struct {
	testpb.UnimplementedTestServiceServer
	fake *fuseboxtest.Fake
}

func (s *fakeService) UnaryCall(ctx context.Context, _ *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	if err := s.fake.Call(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, status.FromContextError(err).Err()
		}
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	return &testpb.SimpleResponse{}, nil
}

// A fake gRPC supplier that fails: the interceptor's breaker opens on the
// failures, the recorder sees the transition, and the next call is refused
// without reaching the server.
func TestFakeGRPCSupplier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, err := fuseboxtest.NewFake(fuseboxtest.Phase{Do: fuseboxtest.Fail(errors.New("payments down"))})
		require.NoError(t, err)
		srv := grpc.NewServer()
		testpb.RegisterTestServiceServer(srv, &fakeService{fake: fake})
		addr := serve(t, srv)

		var rec fuseboxtest.Recorder
		g := newGroup(t, executor.GroupConfig{Default: defaults(), OnTransition: rec.Listen}) // 2 failures trip
		client := dial(t, addr, &fusegrpc.Interceptor{Group: g})
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()

		for range 2 {
			_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{})
			require.Error(t, err)
			assert.Equal(t, "payments down", status.Convert(err).Message(), "the fake's failure, as a status")
		}
		open, err := rec.WaitForState(ctx, breaker.Open)
		require.NoError(t, err)
		assert.Equal(t, breaker.ConsecutiveFailures, open.Reason)

		_, err = client.UnaryCall(ctx, &testpb.SimpleRequest{})
		assert.ErrorIs(t, err, breaker.ErrOpen)
		assert.Equal(t, 2, fake.Calls(), "the refused call never reached the server")
	})
}
