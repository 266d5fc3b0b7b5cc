package fusegrpc_test

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusegrpc"
)

// wait bounds every require.Eventually: generous, since it only matters
// when a test is about to fail. The waits are for the far side of a real
// loopback connection (a server noticing a cancellation), which no
// synctest bubble can fast-forward.
const (
	wait = 10 * time.Second
	tick = 5 * time.Millisecond
)

// hang is the payload body that makes a method block until its call is
// cancelled.
const hang = "hang"

// service is grpc's own interop test service, with behaviour the request
// chooses:
//   - EmptyCall hangs until the call's context ends;
//   - UnaryCall answers with ResponseStatus (OK when unset);
//   - StreamingOutputCall sends one message per ResponseParameters, then
//     hangs if the payload says "hang", else ends with ResponseStatus;
//   - StreamingInputCall adds up the payload sizes until the client closes;
//   - FullDuplexCall echoes every message until the client closes.
type service struct {
	testpb.UnimplementedTestServiceServer
	inside atomic.Int64 // calls being handled right now
	duplex atomic.Int64 // FullDuplexCall streams the server has seen
}

func (s *service) EmptyCall(ctx context.Context, _ *testpb.Empty) (*testpb.Empty, error) {
	s.inside.Add(1)
	defer s.inside.Add(-1)
	<-ctx.Done()
	return nil, status.FromContextError(ctx.Err()).Err()
}

func (s *service) UnaryCall(_ context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	if st := req.GetResponseStatus(); st.GetCode() != 0 {
		return nil, status.Error(codes.Code(st.GetCode()), st.GetMessage())
	}
	return &testpb.SimpleResponse{Payload: req.GetPayload()}, nil
}

func (s *service) StreamingOutputCall(req *testpb.StreamingOutputCallRequest, stream testpb.TestService_StreamingOutputCallServer) error {
	s.inside.Add(1)
	defer s.inside.Add(-1)
	for range req.GetResponseParameters() {
		if err := stream.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
			return err
		}
	}
	if string(req.GetPayload().GetBody()) == hang {
		<-stream.Context().Done()
		return status.FromContextError(stream.Context().Err()).Err()
	}
	if st := req.GetResponseStatus(); st.GetCode() != 0 {
		return status.Error(codes.Code(st.GetCode()), st.GetMessage())
	}
	return nil
}

func (s *service) StreamingInputCall(stream testpb.TestService_StreamingInputCallServer) error {
	total := 0
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return stream.SendAndClose(&testpb.StreamingInputCallResponse{AggregatedPayloadSize: int32(total)})
		}
		if err != nil {
			return err
		}
		total += len(req.GetPayload().GetBody())
	}
}

func (s *service) FullDuplexCall(stream testpb.TestService_FullDuplexCallServer) error {
	s.duplex.Add(1)
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(&testpb.StreamingOutputCallResponse{Payload: req.GetPayload()}); err != nil {
			return err
		}
	}
}

// startServer serves the test service on a fresh port of 127.0.0.1 until
// the test ends, and returns its address.
func startServer(t *testing.T) (string, *service) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	svc := &service{}
	testpb.RegisterTestServiceServer(srv, svc)
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return lis.Addr().String(), svc
}

// newGroup returns a group closed when the test ends.
func newGroup(t *testing.T, cfg executor.GroupConfig) *executor.Group {
	t.Helper()
	g, err := executor.NewGroup(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		require.NoError(t, g.Close(ctx))
	})
	return g
}

// defaults: room for a few calls, and a timeout no test reaches unless it
// means to.
func defaults() executor.Config {
	return executor.Config{
		Workers:           4,
		InvocationTimeout: time.Minute,
		Breaker:           breaker.Config{ConsecutiveFailures: 2, ResetTimeout: 2 * time.Minute},
	}
}

// dial connects to addr through ic; the connection closes when the test ends.
func dial(t *testing.T, addr string, ic *fusegrpc.Interceptor) testpb.TestServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, append(ic.DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return testpb.NewTestServiceClient(conn)
}

// stats returns the stats of the executor for key, failing the test if the
// group has none.
func stats(t *testing.T, g *executor.Group, key string) executor.Stats {
	t.Helper()
	ex, ok := g.Lookup(key)
	require.True(t, ok, "no executor for %q", key)
	return ex.Stats()
}

// settled waits until key's executor holds no slot and recorded(its
// stats) holds, and returns the stats then. A call gives its slot back
// just before its outcome is counted, so a free slot alone does not mean
// the counts are final.
func settled(t *testing.T, g *executor.Group, key string, recorded func(executor.Stats) bool) executor.Stats {
	t.Helper()
	var st executor.Stats
	ok := assert.Eventually(t, func() bool {
		st = stats(t, g, key)
		return st.Busy == 0 && recorded(st)
	}, wait, tick)
	if !ok {
		t.Fatalf("%s not settled after %v: %+v", key, wait, st)
	}
	return st
}

// busy returns a func for require.Eventually: true once key's executor has
// n slots held.
func busy(t *testing.T, g *executor.Group, key string, n int) func() bool {
	return func() bool { return stats(t, g, key).Busy == n }
}

func withStatus(c codes.Code) *testpb.EchoStatus {
	return &testpb.EchoStatus{Code: int32(c), Message: "told to fail with " + c.String()}
}

// code returns err's gRPC status code; require-friendly.
func code(err error) codes.Code { return status.Code(err) }

func insecureCreds() credentials.TransportCredentials { return insecure.NewCredentials() }

// deadAddr returns an address of 127.0.0.1 where nothing listens.
func deadAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close())
	return addr
}

// memStream is a client stream that ends at once, from memory.
type memStream struct{ ctx context.Context }

func (s *memStream) Header() (metadata.MD, error) { return nil, nil }
func (s *memStream) Trailer() metadata.MD         { return nil }
func (s *memStream) CloseSend() error             { return nil }
func (s *memStream) Context() context.Context     { return s.ctx }
func (s *memStream) SendMsg(any) error            { return nil }
func (s *memStream) RecvMsg(any) error            { return io.EOF }
