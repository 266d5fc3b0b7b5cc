package fusegrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
	"github.com/fusebox-go/fusebox/fusegrpc"
)

const (
	emptyCall = "/grpc.testing.TestService/EmptyCall"
	unaryCall = "/grpc.testing.TestService/UnaryCall"
	outCall   = "/grpc.testing.TestService/StreamingOutputCall"
)

// startProtected serves the test service behind s in memory until the
// test ends, and returns a plain client of it.
func startProtected(t *testing.T, s *fusegrpc.Server) (testpb.TestServiceClient, *service) {
	t.Helper()
	srv := grpc.NewServer(s.ServerOptions()...)
	svc := &service{}
	testpb.RegisterTestServiceServer(srv, svc)
	return testpb.NewTestServiceClient(connect(t, serve(t, srv))), svc
}

// pushback returns the pushback trailer of a call, in ms; -1 if none.
func pushback(t *testing.T, md metadata.MD) int {
	t.Helper()
	v := md.Get(fusegrpc.PushbackKey)
	if len(v) == 0 {
		return -1
	}
	ms, err := strconv.Atoi(v[0])
	require.NoError(t, err)
	return ms
}

func TestServerBulkheadsEachMethod(t *testing.T) {
	t.Run("a hung method is refused with ResourceExhausted and pushback, its siblings are served", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 2, InvocationTimeout: time.Minute,
				Breaker: breaker.Config{ResetTimeout: 2 * time.Minute}}})
			client, svc := startProtected(t, &fusegrpc.Server{Group: g})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			for range 2 {
				go client.EmptyCall(ctx, &testpb.Empty{})
			}
			synctest.Wait()
			require.Equal(t, int64(2), svc.inside.Load(), "both calls are in their handler")
			var trailer metadata.MD
			_, err := client.EmptyCall(t.Context(), &testpb.Empty{}, grpc.Trailer(&trailer))
			require.Equal(t, codes.ResourceExhausted, code(err), "got %v", err)
			assert.Equal(t, 1000, pushback(t, trailer), "busy: come back in a second")
			assert.Equal(t, int64(2), svc.inside.Load(), "the refused call never reached the handler")

			_, err = client.UnaryCall(t.Context(), &testpb.SimpleRequest{})
			require.NoError(t, err, "UnaryCall has slots of its own")
			assert.Equal(t, 2, stats(t, g, emptyCall).InUse)
			assert.Equal(t, uint64(1), stats(t, g, unaryCall).Successes)
			cancel()
			settled(t, g, emptyCall, nil)
			assert.Equal(t, uint64(2), stats(t, g, emptyCall).Ignored, "the client's cancellation is ignored")
		})
	})
	t.Run("an open breaker answers Unavailable with the time to its probe", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{Default: executor.Config{Breaker: breaker.Config{ResetTimeout: 30 * time.Second}}})
			client, _ := startProtected(t, &fusegrpc.Server{Group: g})
			ex, err := g.Executor(unaryCall)
			require.NoError(t, err)
			ex.Breaker().Trip(breaker.Manual)
			var trailer metadata.MD
			_, err = client.UnaryCall(t.Context(), &testpb.SimpleRequest{}, grpc.Trailer(&trailer))
			require.Equal(t, codes.Unavailable, code(err))
			assert.InDelta(t, 30000, pushback(t, trailer), 2000)
			require.ErrorContains(t, err, "open")
		})
	})
	t.Run("a stream holds its slot while its handler runs", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 1}})
			client, svc := startProtected(t, &fusegrpc.Server{Group: g})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			hung, err := client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{Payload: &testpb.Payload{Body: []byte(hang)}})
			require.NoError(t, err)
			synctest.Wait()
			require.Equal(t, int64(1), svc.inside.Load(), "the hung stream is in its handler")
			s, err := client.StreamingOutputCall(t.Context(), &testpb.StreamingOutputCallRequest{})
			require.NoError(t, err)
			_, err = s.Recv()
			require.Equal(t, codes.ResourceExhausted, code(err))
			assert.Equal(t, 1000, pushback(t, s.Trailer()))
			cancel()
			_, err = hung.Recv()
			require.Error(t, err)
			settled(t, g, outCall, nil)
		})
	})
	t.Run("Key names the executor; an empty key serves without a slot; a panicking Key is Internal", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{})
			client, _ := startProtected(t, &fusegrpc.Server{Group: g, Key: func(_ context.Context, m string) string {
				switch m {
				case unaryCall:
					return "api"
				case emptyCall:
					panic("bad key")
				}
				return ""
			}})
			_, err := client.UnaryCall(t.Context(), &testpb.SimpleRequest{})
			require.NoError(t, err)
			assert.Equal(t, []string{"api"}, g.Names())
			_, err = client.EmptyCall(t.Context(), &testpb.Empty{})
			require.Equal(t, codes.Internal, code(err))
			require.NotContains(t, err.Error(), "bad key", "the panic's text stays in the server's log")
			require.NotContains(t, err.Error(), "fusegrpc.Server.Key")
		})
	})
	t.Run("Classify decides what the breaker records", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{Default: executor.Config{Breaker: breaker.Config{ConsecutiveFailures: 2}}})
			client, _ := startProtected(t, &fusegrpc.Server{Group: g, Classify: fusegrpc.DefaultClassify})
			for range 2 {
				_, err := client.UnaryCall(t.Context(), &testpb.SimpleRequest{ResponseStatus: withStatus(codes.Internal)})
				require.Equal(t, codes.Internal, code(err))
			}
			assert.Equal(t, breaker.Open, stats(t, g, unaryCall).Breaker.State)
		})
	})
}

func TestServerWithoutClassifyCountsAnswersAsSuccesses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: executor.Config{Breaker: breaker.Config{ConsecutiveFailures: 2}}})
		client, _ := startProtected(t, &fusegrpc.Server{Group: g})
		for range 3 {
			_, err := client.UnaryCall(t.Context(), &testpb.SimpleRequest{ResponseStatus: withStatus(codes.Internal)})
			require.Equal(t, codes.Internal, code(err))
		}
		st := stats(t, g, unaryCall)
		assert.Equal(t, breaker.Closed, st.Breaker.State)
		assert.Equal(t, uint64(3), st.Successes)
	})
}

// A grpc-go client with a retry policy waits as the pushback trailer asks,
// rather than by its own backoff, and its retry finds the slot free.
func TestServerPushbackIsHonouredByARetryingClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Timeouts out of reach, so that the held slot never counts as
		// stuck: the first attempt must meet a busy bulkhead, not trip the
		// breaker.
		refused := make(chan struct{}) // closed at the first busy refusal
		var once sync.Once
		g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 1, InvocationTimeout: time.Minute,
			Breaker: breaker.Config{ResetTimeout: 2 * time.Minute},
			OnBusy:  func(executor.Busy) { once.Do(func() { close(refused) }) }}})
		s := &fusegrpc.Server{Group: g}
		srv := grpc.NewServer(s.ServerOptions()...)
		testpb.RegisterTestServiceServer(srv, &service{})
		addr := serve(t, srv)
		const retry = `{"methodConfig": [{"name": [{"service": "grpc.testing.TestService"}], "retryPolicy": {
		"maxAttempts": 2, "initialBackoff": "0.01s", "maxBackoff": "0.01s", "backoffMultiplier": 1,
		"retryableStatusCodes": ["RESOURCE_EXHAUSTED"]}}]}`
		client := testpb.NewTestServiceClient(connect(t, addr, grpc.WithDefaultServiceConfig(retry)))

		ex, err := g.Executor(unaryCall)
		require.NoError(t, err)
		l, err := ex.Lease(t.Context()) // the method's only slot
		require.NoError(t, err)
		// The slot is given back once the first attempt has been refused,
		// so that the retry, and only the retry, finds it free.
		released := make(chan struct{})
		go func() {
			defer close(released)
			defer l.Done(nil)
			select {
			case <-refused:
			case <-time.After(wait):
			}
		}()
		t.Cleanup(func() { <-released })

		start := time.Now()
		_, err = client.UnaryCall(t.Context(), &testpb.SimpleRequest{})
		require.NoError(t, err, "the retry got the slot")
		assert.GreaterOrEqual(t, time.Since(start), time.Second, "the client waited the 1 s pushback, not its 10 ms backoff")
		assert.Equal(t, uint64(1), ex.Stats().Rejected.Busy)
	})
}

// serverStream is a server stream in memory: only its context is used.
type serverStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *serverStream) Context() context.Context { return s.ctx }

// A handler or a Classify that ends its goroutine (runtime.Goexit, as
// t.FailNow does in a test's fake) never returns, yet the slot is given
// back, the call counted as a failure (a panic naming the callback), and
// the Goexit goes on (before, a Classify's Goexit kept the slot for good,
// and a handler's counted as a success). A handler
// that does so after its client went away is ignored, as its return would
// be. In memory, on the interceptors themselves: grpc's own server is not
// the point.
func TestServerGoexitGivesTheSlotBack(t *testing.T) {
	failing := func(context.Context, any) (any, error) { return nil, errors.New("not found") }
	goexitHandler := func(context.Context, any) (any, error) { runtime.Goexit(); return nil, nil }
	goexitClassify := func(error) error { runtime.Goexit(); return nil }
	for _, tc := range []struct {
		name     string
		classify func(error) error
		handler  grpc.UnaryHandler
		callback string
	}{
		{"a Classify", goexitClassify, failing, "fusegrpc.Server.Classify"},
		{"a handler", nil, goexitHandler, "handler"},
		{"a handler, with a Classify", fusegrpc.DefaultClassify, goexitHandler, "handler"},
	} {
		run := func(t *testing.T, call func(s *fusegrpc.Server, ctx context.Context, method string)) {
			cfg := defaults()
			cfg.Breaker.ConsecutiveFailures = 1 // the trip shows the error recorded
			var rec fuseboxtest.Recorder
			g := newGroup(t, executor.GroupConfig{Default: cfg, OnTransition: rec.Listen})
			s := &fusegrpc.Server{Group: g, Classify: tc.classify}
			returned := false
			done := make(chan struct{})
			go func() {
				defer close(done)
				call(s, context.Background(), "/s/M")
				returned = true
			}()
			<-done
			assert.False(t, returned, "the Goexit went on")
			st := stats(t, g, "/s/M")
			assert.Zero(t, st.InUse, "the slot is given back")
			assert.Equal(t, uint64(1), st.Failures)
			assert.Equal(t, uint64(1), st.Panics)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			open, err := rec.WaitForState(ctx, breaker.Open)
			require.NoError(t, err)
			var pe *breaker.PanicError
			require.ErrorAs(t, open.Err, &pe)
			assert.Equal(t, tc.callback, pe.Callback)
		}
		t.Run(tc.name+" that calls runtime.Goexit in a unary call", func(t *testing.T) {
			run(t, func(s *fusegrpc.Server, ctx context.Context, method string) {
				s.Unary()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: method}, tc.handler)
			})
		})
		t.Run(tc.name+" that calls runtime.Goexit in a stream", func(t *testing.T) {
			run(t, func(s *fusegrpc.Server, ctx context.Context, method string) {
				s.Stream()(nil, &serverStream{ctx: ctx}, &grpc.StreamServerInfo{FullMethod: method},
					func(any, grpc.ServerStream) error {
						_, err := tc.handler(ctx, nil)
						return err
					})
			})
		})
	}
	t.Run("a handler that calls runtime.Goexit after its client went away is ignored", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: defaults()})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			(&fusegrpc.Server{Group: g}).Unary()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/s/M"},
				func(context.Context, any) (any, error) { cancel(); runtime.Goexit(); return nil, nil })
		}()
		<-done
		st := stats(t, g, "/s/M")
		assert.Zero(t, st.InUse)
		assert.Equal(t, uint64(1), st.Ignored)
		assert.Zero(t, st.Failures)
	})
}

// Behind grpc.UnknownServiceHandler every method name a client invents
// reaches the interceptor: the names make at most the Group's cap of
// executors (and metric series), however many there are and however long.
func TestServerInventedMethodsAreBounded(t *testing.T) {
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer slog.SetDefault(old)
	g := newGroup(t, executor.GroupConfig{})
	s := &fusegrpc.Server{Group: g}
	ok := func(context.Context, any) (any, error) { return nil, nil }
	for i := range 3000 {
		method := fmt.Sprintf("/attacker.Service%d/Method", i)
		if i%10 == 0 {
			method = "/" + strings.Repeat("m", 64<<10) + strconv.Itoa(i)
		}
		_, err := s.Unary()(t.Context(), nil, &grpc.UnaryServerInfo{FullMethod: method}, ok)
		require.NoError(t, err)
	}
	names := g.Names()
	assert.LessOrEqual(t, len(names), 1024+16, "the default cap and the overflow executors")
	for _, n := range names {
		assert.LessOrEqual(t, len(n), executor.MaxNameLen)
	}
}

// A remote client reads no internal detail: not a Strict group's
// configured supplier names, nor the name the call was refused under.
func TestServerRefusalsTellTheClientNothingInternal(t *testing.T) {
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer slog.SetDefault(old)
	g := newGroup(t, executor.GroupConfig{Strict: true, Suppliers: map[string]executor.Config{"internal-billing-db": {}}})
	s := &fusegrpc.Server{Group: g, Key: func(context.Context, string) string { return "internal-billing-db" }}
	ok := func(context.Context, any) (any, error) { return nil, nil }
	ex, _ := g.Lookup("internal-billing-db")
	ex.Breaker().ForceOpen()
	_, err := s.Unary()(t.Context(), nil, &grpc.UnaryServerInfo{FullMethod: "/s/M"}, ok)
	require.Equal(t, codes.Unavailable, code(err))
	require.ErrorIs(t, err, breaker.ErrOpen, "for the server's own code")
	assert.NotContains(t, err.Error(), "internal-billing-db")

	unlisted := &fusegrpc.Server{Group: g}
	_, err = unlisted.Unary()(t.Context(), nil, &grpc.UnaryServerInfo{FullMethod: "/s/M"}, ok)
	require.Equal(t, codes.Internal, code(err))
	require.ErrorIs(t, err, executor.ErrUnknownSupplier)
	assert.NotContains(t, err.Error(), "internal-billing-db")
}
