package faults_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusegrpc"
)

// grpcRig is a gRPC server (grpc's health service) behind Toxiproxy,
// called through fusegrpc's interceptors as the supplier "payments".
type grpcRig struct {
	proxy  *toxi
	health healthpb.HealthClient
	ex     *executor.Executor
	w      *watch
}

func newGRPCRig(t *testing.T) *grpcRig {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)

	proxy := newToxi(t, ln.Addr().String())
	g, w := newGroup(t)
	ic := &fusegrpc.Interceptor{Group: g, Names: map[string]string{proxy.addr(): "payments"}}
	// A reconnection backoff to match the short reset timeout: grpc's
	// default starts at 1 s and grows to 2 min, which a probe after a
	// longer fault would find still running.
	opts := append(ic.DialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: time.Second,
		}))
	conn, err := grpc.NewClient(proxy.addr(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return &grpcRig{proxy: proxy, health: healthpb.NewHealthClient(conn), ex: payments(t, g), w: w}
}

// call is one call of the load.
func (r *grpcRig) call(ctx context.Context) string {
	_, err := r.health.Check(ctx, &healthpb.HealthCheckRequest{})
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, breaker.ErrOpen):
		return "open"
	case errors.Is(err, executor.ErrSaturated):
		return "saturated"
	case errors.Is(err, executor.ErrBusy):
		return "busy"
	case errors.Is(err, executor.ErrTimeout):
		return "timeout"
	}
	return "failed"
}

func (r *grpcRig) requireRecovered(t *testing.T, l *load) {
	t.Helper()
	l.stop()
	requireAllFree(t, r.ex, r.w)
	requireClosed(t, r.ex)
	t.Logf("outcomes %v; transitions %v", l.snapshot(), describe(r.w.Events()))
}

// A black-holed HTTP/2 connection hangs every call on it: the breaker
// trips by saturation before the first call times out, and closes after
// the toxic is gone (the proxy closes the connection, grpc dials again).
func TestGRPCHangTripsBySaturation(t *testing.T) {
	t.Parallel()
	r := newGRPCRig(t)
	l := startLoad(t, r.call)
	awaitOK(t, l, 20)

	r.proxy.add(t, "timeout", map[string]any{"timeout": 0})
	start := time.Now()
	trip, before := r.w.until(t, breaker.Open)
	require.Empty(t, before, "transitions before the trip")
	assert.Equal(t, breaker.Saturation, trip.Reason, "the hang trips by saturation")
	assert.Less(t, trip.Time.Sub(start), invocationTimeout, "the hang trips before the first call can time out")
	t.Logf("tripped %v after the toxic", trip.Time.Sub(start).Round(time.Millisecond))

	removed := time.Now()
	r.proxy.remove(t, "timeout")
	closed, between := r.w.until(t, breaker.Closed)
	assert.Equal(t, breaker.ProbesSucceeded, closed.Reason)
	t.Logf("closed %v after the toxic's removal, by way of %v", closed.Time.Sub(removed).Round(time.Millisecond), describe(between))
	r.requireRecovered(t, l)
}

// Reset connections fail the calls at once (Unavailable): the breaker
// trips on consecutive failures and closes after the fault.
func TestGRPCResetPeerTripsOnConsecutiveFailures(t *testing.T) {
	t.Parallel()
	r := newGRPCRig(t)
	l := startLoad(t, r.call)
	awaitOK(t, l, 20)

	r.proxy.add(t, "reset_peer", map[string]any{"timeout": 0})
	start := time.Now()
	trip, before := r.w.until(t, breaker.Open)
	require.Empty(t, before, "transitions before the trip")
	assert.Equal(t, breaker.ConsecutiveFailures, trip.Reason, "resets trip on consecutive failures")
	assert.NotErrorIs(t, trip.Err, executor.ErrTimeout, "the failures are resets, not timeouts")
	assert.Less(t, trip.Time.Sub(start), invocationTimeout, "five resets come long before any timeout")
	t.Logf("tripped %v after the toxic: %v", trip.Time.Sub(start).Round(time.Millisecond), trip.Err)

	removed := time.Now()
	r.proxy.remove(t, "reset_peer")
	closed, between := r.w.until(t, breaker.Closed)
	assert.Equal(t, breaker.ProbesSucceeded, closed.Reason)
	t.Logf("closed %v after the toxic's removal, by way of %v", closed.Time.Sub(removed).Round(time.Millisecond), describe(between))
	r.requireRecovered(t, l)
}
