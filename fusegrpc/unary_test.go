package fusegrpc_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusegrpc"
)

func TestUnaryCallsAreClassifiedByStatusCode(t *testing.T) {
	tests := []struct {
		name                         string
		code                         codes.Code
		successes, failures, ignored uint64
	}{
		{name: "an answer counts as a success", code: codes.OK, successes: 1},
		{name: "not found is the supplier answering", code: codes.NotFound, successes: 1},
		{name: "invalid argument is the caller's fault", code: codes.InvalidArgument, successes: 1},
		{name: "permission denied is the caller's fault", code: codes.PermissionDenied, successes: 1},
		{name: "unavailable is a failure", code: codes.Unavailable, failures: 1},
		{name: "resource exhausted is a failure", code: codes.ResourceExhausted, failures: 1},
		{name: "internal is a failure", code: codes.Internal, failures: 1},
		{name: "unknown is a failure", code: codes.Unknown, failures: 1},
		{name: "a server's cancelled is ignored", code: codes.Canceled, ignored: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				addr, _ := startServer(t)
				g := newGroup(t, executor.GroupConfig{Default: defaults()})
				client := dial(t, addr, &fusegrpc.Interceptor{Group: g})

				req := &testpb.SimpleRequest{}
				if tt.code != codes.OK {
					req.ResponseStatus = withStatus(tt.code)
				}
				_, err := client.UnaryCall(context.Background(), req)

				// The caller gets the server's own status, whatever the verdict.
				require.Equal(t, tt.code, code(err), "got %v", err)
				if tt.code != codes.OK {
					assert.Contains(t, status.Convert(err).Message(), "told to fail")
				}
				st := stats(t, g, addr)
				assert.Equal(t, tt.successes, st.Successes, "successes")
				assert.Equal(t, tt.failures, st.Failures, "failures")
				assert.Equal(t, tt.ignored, st.Ignored, "ignored")
				assert.Zero(t, st.InUse, "slots held after the call")
			})
		})
	}
}

func TestAHangingTargetTripsItsOwnBreakerWhileAnotherServes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hung, hungSvc := startServer(t)
		healthy, _ := startServer(t)
		// Only the hung target's calls time out fast: the healthy one keeps
		// the default minute.
		fast := defaults()
		fast.InvocationTimeout = 50 * time.Millisecond
		g := newGroup(t, executor.GroupConfig{Default: defaults(), Suppliers: map[string]executor.Config{hung: fast}})
		ic := &fusegrpc.Interceptor{Group: g}
		hungClient, healthyClient := dial(t, hung, ic), dial(t, healthy, ic)

		// EmptyCall hangs: each call times out, and the second in a row opens
		// the breaker (ConsecutiveFailures: 2).
		for range 2 {
			_, err := hungClient.EmptyCall(context.Background(), &testpb.Empty{})
			require.Equal(t, codes.DeadlineExceeded, code(err), "got %v", err)
		}
		require.Equal(t, breaker.Open, stats(t, g, hung).Breaker.State)

		// From now on calls to the hung target fail fast, without being sent.
		before := hungSvc.inside.Load()
		_, err := hungClient.EmptyCall(context.Background(), &testpb.Empty{})
		require.Equal(t, codes.Unavailable, code(err), "got %v", err)
		require.ErrorIs(t, err, breaker.ErrOpen)
		assert.Contains(t, status.Convert(err).Message(), "circuit breaker is open")
		assert.Contains(t, status.Convert(err).Message(), hung)
		assert.LessOrEqual(t, hungSvc.inside.Load(), before, "a refused call reached the server")

		// The other target keeps serving through its own executor.
		for range 5 {
			_, err := healthyClient.UnaryCall(context.Background(), &testpb.SimpleRequest{})
			require.NoError(t, err)
		}
		h := stats(t, g, healthy)
		assert.Equal(t, breaker.Closed, h.Breaker.State)
		assert.Equal(t, uint64(5), h.Successes)
		settled(t, g, hung, nil) // the timed-out calls gave their slots back
	})
}

func TestAHangingMethodTripsItsOwnBreakerWithMethodKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		addr, _ := startServer(t)
		emptyKey := addr + "/grpc.testing.TestService/EmptyCall"
		unaryKey := addr + "/grpc.testing.TestService/UnaryCall"
		// Only the hanging method times out fast: the sibling keeps the
		// default minute.
		fast := defaults()
		fast.InvocationTimeout = 50 * time.Millisecond
		g := newGroup(t, executor.GroupConfig{Default: defaults(), Suppliers: map[string]executor.Config{emptyKey: fast}})
		client := dial(t, addr, &fusegrpc.Interceptor{Group: g, Key: fusegrpc.Method})

		for range 3 {
			client.EmptyCall(context.Background(), &testpb.Empty{})
		}
		_, err := client.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		require.NoError(t, err, "a sibling method was refused")

		assert.Equal(t, breaker.Open, stats(t, g, emptyKey).Breaker.State)
		assert.Equal(t, breaker.Closed, stats(t, g, unaryKey).Breaker.State)
		assert.Equal(t, uint64(1), stats(t, g, emptyKey).Rejected.Open)
	})
}

func TestASaturatedSupplierRefusesWithUnavailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		addr, svc := startServer(t)
		cfg := defaults()
		cfg.Slots = 1
		g := newGroup(t, executor.GroupConfig{Default: cfg})
		client := dial(t, addr, &fusegrpc.Interceptor{Group: g})

		ctx, cancel := context.WithCancel(context.Background())
		first := make(chan error, 1)
		go func() {
			_, err := client.EmptyCall(ctx, &testpb.Empty{})
			first <- err
		}()
		synctest.Wait()
		require.Equal(t, int64(1), svc.inside.Load(), "the first call is in its handler")

		_, err := client.UnaryCall(context.Background(), &testpb.SimpleRequest{})
		require.Equal(t, codes.Unavailable, code(err), "got %v", err)
		require.True(t, errors.Is(err, executor.ErrBusy) || errors.Is(err, executor.ErrSaturated), "got %v", err)
		var rej *executor.RejectedError
		require.ErrorAs(t, err, &rej)
		assert.Equal(t, addr, rej.Supplier)
		assert.Contains(t, status.Convert(err).Message(), "refused without being sent")

		cancel()
		require.Equal(t, codes.Canceled, code(<-first))
		st := settled(t, g, addr, func(st executor.Stats) bool { return st.Cancelled+st.Failures+st.Successes >= 1 })
		assert.Equal(t, uint64(1), st.Cancelled, "the caller's cancellation")
	})
}

func TestTheCallersDeadlineIsTheCallersStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		addr, _ := startServer(t)
		g := newGroup(t, executor.GroupConfig{Default: defaults()})
		client := dial(t, addr, &fusegrpc.Interceptor{Group: g})

		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := client.EmptyCall(ctx, &testpb.Empty{})
		require.Equal(t, codes.DeadlineExceeded, code(err), "got %v", err)
		settled(t, g, addr, nil)
	})
}

func TestUserCallbacksCannotCrashACall(t *testing.T) {
	t.Run("a key function that panics fails the call with Internal", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			ic := &fusegrpc.Interceptor{Group: g, Key: func(context.Context, string, *grpc.ClientConn) string { panic("bad key") }}
			client := dial(t, addr, ic)
			_, err := client.UnaryCall(context.Background(), &testpb.SimpleRequest{})
			require.Equal(t, codes.Internal, code(err), "got %v", err)
			assert.Contains(t, err.Error(), "bad key")
			var pe *breaker.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "fusegrpc.Interceptor.Key", pe.Callback)
			stream, err := client.FullDuplexCall(context.Background())
			require.Nil(t, stream)
			require.Equal(t, codes.Internal, code(err), "got %v", err)
		})
	})
	t.Run("a key function that returns no key fails the call with Internal", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			ic := &fusegrpc.Interceptor{Group: g, Key: func(context.Context, string, *grpc.ClientConn) string { return "" }}
			_, err := dial(t, addr, ic).UnaryCall(context.Background(), &testpb.SimpleRequest{})
			require.Equal(t, codes.Internal, code(err), "got %v", err)
			assert.Contains(t, err.Error(), "no key")
		})
	})
	t.Run("a name mapped to \"\" fails the call with Internal, naming Names", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			ic := &fusegrpc.Interceptor{Group: g, Names: map[string]string{addr: ""}}
			_, err := dial(t, addr, ic).UnaryCall(context.Background(), &testpb.SimpleRequest{})
			require.Equal(t, codes.Internal, code(err), "got %v", err)
			assert.Contains(t, err.Error(), "Interceptor.Names")
			assert.NotContains(t, err.Error(), "Interceptor.Key", "Key is the default")
		})
	})
	t.Run("a classifier that panics makes the call a failure, and the caller still gets its answer", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			var logs bytes.Buffer
			defer slog.SetDefault(slog.Default())
			slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			ic := &fusegrpc.Interceptor{Group: g, Classify: func(error) error { panic("bad classifier") }}
			client := dial(t, addr, ic)
			_, err := client.UnaryCall(context.Background(), &testpb.SimpleRequest{ResponseStatus: withStatus(codes.NotFound)})
			require.Equal(t, codes.NotFound, code(err), "the caller must get the server's answer")
			_, err = client.UnaryCall(context.Background(), &testpb.SimpleRequest{})
			require.NoError(t, err, "the caller must get the server's answer")
			st := stats(t, g, addr)
			assert.Equal(t, uint64(2), st.Failures, "both calls, whatever their answer")
			assert.Zero(t, st.Successes)
			assert.Equal(t, 2, strings.Count(logs.String(), "Interceptor.Classify panicked"), "logged with its stack")
		})
	})
	t.Run("a custom classifier decides what fails", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			ic := &fusegrpc.Interceptor{Group: g, Classify: func(err error) error {
				if status.Code(err) == codes.NotFound {
					return err // this team counts a missing record as the supplier's fault
				}
				return fusegrpc.DefaultClassify(err)
			}}
			_, err := dial(t, addr, ic).UnaryCall(context.Background(), &testpb.SimpleRequest{ResponseStatus: withStatus(codes.NotFound)})
			require.Equal(t, codes.NotFound, code(err))
			assert.Equal(t, uint64(1), stats(t, g, addr).Failures)
		})
	})
	// A stream's streamer (the next interceptor) and its Classify run on
	// the caller's goroutine; one that ends it (runtime.Goexit, as t.FailNow
	// does in a test's fake) never returns, yet the slot is given back, the
	// stream counted as a failure (a panic naming it), and the Goexit goes
	// on. In memory: the network is not the point.
	goexit := func(t *testing.T, ic *fusegrpc.Interceptor, streamer grpc.Streamer) {
		t.Helper()
		returned := false
		done := make(chan struct{})
		go func() {
			defer close(done)
			cs, err := ic.Stream()(context.Background(), &grpc.StreamDesc{ServerStreams: true}, nil, "/s/m", streamer)
			if err == nil {
				cs.RecvMsg(nil)
			}
			returned = true
		}()
		<-done
		assert.False(t, returned, "the Goexit went on")
		st := stats(t, ic.Group, "k")
		assert.Zero(t, st.InUse, "the slot is given back")
		assert.Equal(t, uint64(1), st.Failures)
		assert.Equal(t, uint64(1), st.Panics)
	}
	key := func(context.Context, string, *grpc.ClientConn) string { return "k" }
	memStreamer := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
		return &memStream{ctx: ctx}, nil
	}
	t.Run("a streamer that calls runtime.Goexit gives the slot back", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: defaults()})
		goexit(t, &fusegrpc.Interceptor{Group: g, Key: key},
			func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
				runtime.Goexit()
				return nil, nil
			})
	})
	t.Run("a stream's classifier that calls runtime.Goexit gives the slot back", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: defaults()})
		goexit(t, &fusegrpc.Interceptor{Group: g, Key: key, Classify: func(error) error { runtime.Goexit(); return nil }}, memStreamer)
	})
	t.Run("a classifier that calls runtime.Goexit on a stream that fails to open gives the slot back", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: defaults()})
		goexit(t, &fusegrpc.Interceptor{Group: g, Key: key, Classify: func(error) error { runtime.Goexit(); return nil }},
			func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
				return nil, status.Error(codes.Unavailable, "no connection")
			})
	})
	t.Run("a nil group is an error, not a panic", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			_, err := dial(t, addr, &fusegrpc.Interceptor{}).UnaryCall(context.Background(), &testpb.SimpleRequest{})
			require.Equal(t, codes.Internal, code(err))
			assert.Contains(t, err.Error(), "Group is nil")
		})
	})
}

func TestDefaultClassify(t *testing.T) {
	failures := []codes.Code{codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted,
		codes.Internal, codes.Unknown, codes.DataLoss}
	answers := []codes.Code{codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.Unauthenticated, codes.FailedPrecondition, codes.Aborted, codes.OutOfRange, codes.Unimplemented}
	for _, c := range failures {
		err := status.Error(c, "x")
		assert.Equal(t, err, fusegrpc.DefaultClassify(err), "%v must be a failure", c)
	}
	for _, c := range answers {
		assert.NoError(t, fusegrpc.DefaultClassify(status.Error(c, "x")), "%v must not be a failure", c)
	}
	assert.Equal(t, context.Canceled, fusegrpc.DefaultClassify(status.Error(codes.Canceled, "x")))
	assert.NoError(t, fusegrpc.DefaultClassify(nil))
	plain := errors.New("connection reset")
	assert.Equal(t, plain, fusegrpc.DefaultClassify(plain), "an error without a status is a failure")
}

func TestKeys(t *testing.T) {
	conn, err := grpc.NewClient("passthrough:///payments:443", grpc.WithTransportCredentials(insecureCreds()))
	require.NoError(t, err)
	defer conn.Close()
	m := "/shop.Payments/Charge"
	assert.Equal(t, "passthrough:///payments:443", fusegrpc.Target(context.Background(), m, conn))
	assert.Equal(t, "passthrough:///payments:443/shop.Payments", fusegrpc.Service(context.Background(), m, conn))
	assert.Equal(t, "passthrough:///payments:443/shop.Payments/Charge", fusegrpc.Method(context.Background(), m, conn))
}

func TestNamesMapTargetsToSuppliers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		payments, _ := startServer(t)
		unknown, _ := startServer(t)
		g := newGroup(t, executor.GroupConfig{Strict: true, Suppliers: map[string]executor.Config{"payments": defaults()}})
		ic := &fusegrpc.Interceptor{Group: g, Names: map[string]string{payments: "payments"}}
		_, err := dial(t, payments, ic).UnaryCall(context.Background(), &testpb.SimpleRequest{})
		require.NoError(t, err)
		assert.Equal(t, uint64(1), stats(t, g, "payments").Successes)

		_, err = dial(t, unknown, ic).UnaryCall(context.Background(), &testpb.SimpleRequest{})
		require.Equal(t, codes.Internal, code(err), "a configuration error, not worth a retry: got %v", err)
		require.ErrorIs(t, err, executor.ErrUnknownSupplier)
		assert.Equal(t, []string{"payments"}, g.Names())
	})
}
