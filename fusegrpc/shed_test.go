package fusegrpc_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/fusebox-go/fusebox/fusegrpc"
	"github.com/fusebox-go/fusebox/shed"
)

// shedTransport records the trailer a unary interceptor sets.
type shedTransport struct {
	mu      sync.Mutex
	trailer metadata.MD
}

func (t *shedTransport) Method() string               { return "/grpc.testing.TestService/UnaryCall" }
func (t *shedTransport) SetHeader(metadata.MD) error  { return nil }
func (t *shedTransport) SendHeader(metadata.MD) error { return nil }
func (t *shedTransport) SetTrailer(md metadata.MD) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trailer = metadata.Join(t.trailer, md)
	return nil
}

// shedStream is a grpc.ServerStream that records its trailer.
type shedStream struct {
	grpc.ServerStream
	ctx     context.Context
	trailer metadata.MD
}

func (s *shedStream) Context() context.Context  { return s.ctx }
func (s *shedStream) SetTrailer(md metadata.MD) { s.trailer = metadata.Join(s.trailer, md) }

// overloaded starts call every 10 ms, each on a goroutine of its own,
// while goroutines spin on every CPU: the run queue's wait per request
// is far above the shedder's target, and the admitted calls block in
// their handlers until release is closed, so nothing completes and the
// shedder's capacity stays 0. It returns the first refusal, then releases
// the handlers and waits for every goroutine.
func overloaded(t *testing.T, s *shed.Shedder, release chan struct{}, call func() error) error {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < 10000; i++ {
					_ = i * i
				}
			}
		})
	}
	defer func() {
		close(stop)
		close(release)
		wg.Wait()
	}()
	refused := make(chan error, 1)
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-refused:
			return err
		case <-deadline:
			t.Fatalf("no call was refused within 10 s of overload: %+v", s.Stats())
			return nil
		case <-tick.C:
			wg.Go(func() {
				if err := call(); err != nil {
					select {
					case refused <- err:
					default:
					}
				}
			})
		}
	}
}

func newTestShedder(t *testing.T, cfg shed.Config) *shed.Shedder {
	t.Helper()
	s, err := shed.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestShedInterceptors(t *testing.T) {
	t.Run("an overloaded process refuses unary calls with ResourceExhausted and pushback", func(t *testing.T) {
		s := newTestShedder(t, shed.Config{Interval: 10 * time.Millisecond, RetryAfter: 1500 * time.Millisecond})
		ic := fusegrpc.ShedUnary(s, nil)
		info := &grpc.UnaryServerInfo{FullMethod: "/grpc.testing.TestService/UnaryCall"}
		var handled atomic.Int64
		release := make(chan struct{})
		err := overloaded(t, s, release, func() error {
			tr := &shedTransport{}
			ctx := grpc.NewContextWithServerTransportStream(context.Background(), tr)
			_, err := ic(ctx, nil, info, func(context.Context, any) (any, error) {
				handled.Add(1)
				<-release
				return "ok", nil
			})
			if err != nil {
				tr.mu.Lock()
				defer tr.mu.Unlock()
				if got := tr.trailer.Get(fusegrpc.PushbackKey); len(got) != 1 || got[0] != strconv.Itoa(1500) {
					return fmt.Errorf("pushback trailer %v, want [1500]: %w", got, err)
				}
			}
			return err
		})
		assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
		assert.ErrorIs(t, err, shed.ErrShed)
		st := s.Stats()
		assert.Equal(t, uint64(handled.Load()), st.Admitted, "every admitted call ran its handler")
		assert.Positive(t, st.ByReason[shed.Queue]+st.ByReason[shed.Limit], "the refusals")
		assert.Zero(t, st.InFlight)
	})
	t.Run("an overloaded process refuses streams the same way", func(t *testing.T) {
		s := newTestShedder(t, shed.Config{Interval: 10 * time.Millisecond})
		ic := fusegrpc.ShedStream(s, func(context.Context, string) string { return "acme" })
		info := &grpc.StreamServerInfo{FullMethod: "/grpc.testing.TestService/FullDuplexCall"}
		release := make(chan struct{})
		err := overloaded(t, s, release, func() error {
			ss := &shedStream{ctx: context.Background()}
			err := ic(nil, ss, info, func(any, grpc.ServerStream) error { <-release; return nil })
			if got := ss.trailer.Get(fusegrpc.PushbackKey); err != nil && (len(got) != 1 || got[0] != "1000") {
				return fmt.Errorf("pushback trailer %v, want [1000]: %w", got, err)
			}
			return err
		})
		assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
		assert.Zero(t, s.Stats().InFlight)
	})
	t.Run("a calm process serves, and a key that panics fails the call with Internal", func(t *testing.T) {
		s := newTestShedder(t, shed.Config{})
		info := &grpc.UnaryServerInfo{FullMethod: "/grpc.testing.TestService/UnaryCall"}
		v, err := fusegrpc.ShedUnary(s, nil)(context.Background(), nil, info, func(context.Context, any) (any, error) { return "ok", nil })
		require.NoError(t, err)
		assert.Equal(t, "ok", v)
		called := false
		_, err = fusegrpc.ShedUnary(s, func(context.Context, string) string { panic("no peer") })(context.Background(), nil, info,
			func(context.Context, any) (any, error) { called = true; return nil, nil })
		assert.Equal(t, codes.Internal, status.Code(err))
		assert.False(t, called)
		var fe *fusegrpc.Error
		assert.True(t, errors.As(err, &fe))
	})
	t.Run("a nil shedder fails each call with Internal instead of a nil dereference", func(t *testing.T) {
		_, err := fusegrpc.ShedUnary(nil, nil)(context.Background(), nil, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) { return nil, nil })
		assert.Equal(t, codes.Internal, status.Code(err))
	})
}
