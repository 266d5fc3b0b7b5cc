package fusegrpc_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusegrpc"
)

// wait bounds the waits that synctest.Wait cannot replace (a group's
// Close, a retry's fallback): in a bubble it is virtual time, so it only
// matters when a test is about to fail.
const wait = 10 * time.Second

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

// The tests' servers listen in memory (bufconn). A test that runs in a
// testing/synctest bubble then owns every goroutine of its servers, its
// clients and their connections: a call blocked on the far side is
// durably blocked (a real socket's reader never is), so synctest.Wait
// returns once the calls have gone as far as they can, and every timer,
// the executor's included, runs on the bubble's clock. synctest.Test
// returns only when all of them have ended: a goroutine that grpc left
// blocked after Close and Stop fails the test as a deadlock.
var (
	inMemory sync.Map // address → *bufconn.Listener of the servers running
	served   atomic.Int64
)

// serve serves srv in memory until the test ends, and returns the address
// to dial it at (a passthrough target, so that no resolver runs).
func serve(t *testing.T, srv *grpc.Server) string {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	addr := fmt.Sprintf("passthrough:///bufconn-%d", served.Add(1))
	inMemory.Store(addr, lis)
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
		inMemory.Delete(addr)
	})
	return addr
}

// startServer serves the test service in memory until the test ends, and
// returns its address.
func startServer(t *testing.T) (string, *service) {
	t.Helper()
	srv := grpc.NewServer()
	svc := &service{}
	testpb.RegisterTestServiceServer(srv, svc)
	return serve(t, srv), svc
}

// connect returns a connection to addr, in memory if serve made addr, else
// over TCP; it closes when the test ends.
func connect(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if lis, ok := inMemory.Load(addr); ok {
		opts = append(opts, grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return lis.(*bufconn.Listener).DialContext(ctx)
		}))
	}
	conn, err := grpc.NewClient(addr, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
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
		Slots:             4,
		InvocationTimeout: time.Minute,
		Breaker:           breaker.Config{ConsecutiveFailures: 2, ResetTimeout: 2 * time.Minute},
	}
}

// dial connects to addr through ic; the connection closes when the test ends.
func dial(t *testing.T, addr string, ic *fusegrpc.Interceptor) testpb.TestServiceClient {
	t.Helper()
	return testpb.NewTestServiceClient(connect(t, addr, ic.DialOptions()...))
}

// stats returns the stats of the executor for key, failing the test if the
// group has none.
func stats(t *testing.T, g *executor.Group, key string) executor.Stats {
	t.Helper()
	ex, ok := g.Lookup(key)
	require.True(t, ok, "no executor for %q", key)
	return ex.Stats()
}

// settled waits until every other goroutine of the test's bubble is
// durably blocked or gone, so that each call has gone as far as it can:
// then key's executor must hold no slot and, unless recorded is nil,
// recorded(its stats) must hold. It returns the stats.
func settled(t *testing.T, g *executor.Group, key string, recorded func(executor.Stats) bool) executor.Stats {
	t.Helper()
	synctest.Wait()
	st := stats(t, g, key)
	require.Zero(t, st.InUse, "%s: slots still held: %+v", key, st)
	if recorded != nil {
		require.True(t, recorded(st), "%s: outcomes not recorded: %+v", key, st)
	}
	return st
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
