package fusegrpc_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusegrpc"
)

// streamRequest asks for n messages, then the end the test wants.
func streamRequest(n int, body string, st codes.Code) *testpb.StreamingOutputCallRequest {
	req := &testpb.StreamingOutputCallRequest{Payload: &testpb.Payload{Body: []byte(body)}}
	for range n {
		req.ResponseParameters = append(req.ResponseParameters, &testpb.ResponseParameters{})
	}
	if st != codes.OK {
		req.ResponseStatus = withStatus(st)
	}
	return req
}

func TestAStreamHoldsItsSlotUntilItEnds(t *testing.T) {
	t.Run("a server stream read to its end frees the slot before the last Recv returns", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			client := dial(t, addr, &fusegrpc.Interceptor{Group: g})
			stream, err := client.StreamingOutputCall(context.Background(), streamRequest(3, "", codes.OK))
			require.NoError(t, err)
			for range 3 {
				_, err := stream.Recv()
				require.NoError(t, err)
				assert.Equal(t, 1, stats(t, g, addr).InUse, "an open stream must hold its slot")
			}
			_, err = stream.Recv()
			require.ErrorIs(t, err, io.EOF)
			st := stats(t, g, addr)
			assert.Zero(t, st.InUse)
			assert.Equal(t, uint64(1), st.Successes)
		})
	})
	t.Run("a stream that fails frees the slot and counts as a failure", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			client := dial(t, addr, &fusegrpc.Interceptor{Group: g})
			stream, err := client.StreamingOutputCall(context.Background(), streamRequest(1, "", codes.Unavailable))
			require.NoError(t, err)
			_, err = stream.Recv()
			require.NoError(t, err)
			_, err = stream.Recv()
			require.Equal(t, codes.Unavailable, code(err), "got %v", err)
			st := stats(t, g, addr)
			assert.Zero(t, st.InUse)
			assert.Equal(t, uint64(1), st.Failures)
		})
	})
	t.Run("a stream that ends with a business status is a success", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			client := dial(t, addr, &fusegrpc.Interceptor{Group: g})
			stream, err := client.StreamingOutputCall(context.Background(), streamRequest(0, "", codes.NotFound))
			require.NoError(t, err)
			_, err = stream.Recv()
			require.Equal(t, codes.NotFound, code(err))
			assert.Equal(t, uint64(1), stats(t, g, addr).Successes)
		})
	})
	t.Run("a stream the caller cancels frees the slot and counts as ignored", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			client := dial(t, addr, &fusegrpc.Interceptor{Group: g})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stream, err := client.StreamingOutputCall(ctx, streamRequest(1, hang, codes.OK))
			require.NoError(t, err)
			_, err = stream.Recv()
			require.NoError(t, err)
			cancel()
			_, err = stream.Recv()
			require.Equal(t, codes.Canceled, code(err), "got %v", err)
			st := stats(t, g, addr)
			assert.Zero(t, st.InUse)
			assert.Equal(t, uint64(1), st.Cancelled)
			assert.Zero(t, st.Failures)
		})
	})
	t.Run("a stream whose caller cancels without reading again frees the slot", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			client := dial(t, addr, &fusegrpc.Interceptor{Group: g})
			ctx, cancel := context.WithCancel(context.Background())
			_, err := client.StreamingOutputCall(ctx, streamRequest(1, hang, codes.OK))
			require.NoError(t, err)
			assert.Equal(t, 1, stats(t, g, addr).InUse)
			cancel()
			settled(t, g, addr, nil)
		})
	})
	t.Run("a stream that outlives the invocation timeout is cut off", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			cfg := defaults()
			// The dial and the first message take no virtual time: the
			// stream is cut off after them, at the second.
			cfg.InvocationTimeout = time.Second
			g := newGroup(t, executor.GroupConfig{Default: cfg})
			client := dial(t, addr, &fusegrpc.Interceptor{Group: g})
			stream, err := client.StreamingOutputCall(context.Background(), streamRequest(1, hang, codes.OK))
			require.NoError(t, err)
			_, err = stream.Recv()
			require.NoError(t, err)
			_, err = stream.Recv()
			require.Equal(t, codes.DeadlineExceeded, code(err), "got %v", err)
			st := settled(t, g, addr, func(st executor.Stats) bool { return st.Failures > 0 })
			assert.Equal(t, uint64(1), st.Timeouts)
			assert.Equal(t, uint64(1), st.Failures)
		})
	})
	t.Run("a bidirectional stream ends when the server's side does", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			client := dial(t, addr, &fusegrpc.Interceptor{Group: g})
			stream, err := client.FullDuplexCall(context.Background())
			require.NoError(t, err)
			for _, body := range []string{"a", "bb", "ccc"} {
				require.NoError(t, stream.Send(&testpb.StreamingOutputCallRequest{Payload: &testpb.Payload{Body: []byte(body)}}))
				resp, err := stream.Recv()
				require.NoError(t, err)
				assert.Equal(t, body, string(resp.GetPayload().GetBody()))
			}
			require.NoError(t, stream.CloseSend())
			assert.Equal(t, 1, stats(t, g, addr).InUse, "closing the sending side does not end the stream")
			_, err = stream.Recv()
			require.ErrorIs(t, err, io.EOF)
			assert.Zero(t, stats(t, g, addr).InUse)
		})
	})
	t.Run("a client stream ends with its one response", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			client := dial(t, addr, &fusegrpc.Interceptor{Group: g})
			stream, err := client.StreamingInputCall(context.Background())
			require.NoError(t, err)
			for _, body := range []string{"a", "bb", "ccc"} {
				require.NoError(t, stream.Send(&testpb.StreamingInputCallRequest{Payload: &testpb.Payload{Body: []byte(body)}}))
			}
			resp, err := stream.CloseAndRecv()
			require.NoError(t, err)
			assert.Equal(t, int32(6), resp.GetAggregatedPayloadSize())
			st := stats(t, g, addr)
			assert.Zero(t, st.InUse)
			assert.Equal(t, uint64(1), st.Successes)
		})
	})
	t.Run("a stream to a dead target fails and frees the slot", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: defaults()})
		dead := deadAddr(t)
		client := dial(t, dead, &fusegrpc.Interceptor{Group: g})
		stream, err := client.StreamingOutputCall(context.Background(), streamRequest(1, "", codes.OK))
		if err == nil {
			_, err = stream.Recv()
		}
		require.Equal(t, codes.Unavailable, code(err), "got %v", err)
		st := stats(t, g, dead)
		assert.Zero(t, st.InUse)
		assert.Equal(t, uint64(1), st.Failures)
	})
}

func TestARefusedStreamIsNeverOpened(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		addr, svc := startServer(t)
		cfg := defaults()
		cfg.Slots = 2
		g := newGroup(t, executor.GroupConfig{Default: cfg})
		client := dial(t, addr, &fusegrpc.Interceptor{Group: g})

		// Two hanging streams hold both slots; the third finds none.
		ctx, cancel := context.WithCancel(context.Background())
		for range 2 {
			_, err := client.StreamingOutputCall(ctx, streamRequest(0, hang, codes.OK))
			require.NoError(t, err)
		}
		synctest.Wait()
		require.Equal(t, int64(2), svc.inside.Load(), "both hanging streams reached the server")
		_, err := client.FullDuplexCall(context.Background())
		require.Equal(t, codes.Unavailable, code(err), "got %v", err)
		require.True(t, errors.Is(err, executor.ErrBusy) || errors.Is(err, executor.ErrSaturated), "got %v", err)

		// Cancelling them gives every slot back.
		cancel()
		settled(t, g, addr, nil)

		// An open breaker refuses streams too.
		ex, err := g.Executor(addr)
		require.NoError(t, err)
		ex.Breaker().Trip(breaker.Manual)
		_, err = client.FullDuplexCall(context.Background())
		require.Equal(t, codes.Unavailable, code(err), "got %v", err)
		require.ErrorIs(t, err, breaker.ErrOpen)
		assert.Zero(t, stats(t, g, addr).InUse)
		synctest.Wait()
		assert.Zero(t, svc.inside.Load(), "the cancelled streams ended on the server")
	})
}

func TestManyStreamsEndingEveryWayLeaveNoSlotHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		addr, _ := startServer(t)
		cfg := defaults()
		cfg.Slots = 64
		cfg.Breaker.ConsecutiveFailures = 1000 // a third of the streams fail on purpose
		g := newGroup(t, executor.GroupConfig{Default: cfg})
		client := dial(t, addr, &fusegrpc.Interceptor{Group: g})

		done := make(chan struct{})
		for i := range 60 {
			go func() {
				defer func() { done <- struct{}{} }()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				switch i % 3 {
				case 0: // read to the end
					s, err := client.StreamingOutputCall(ctx, streamRequest(2, "", codes.OK))
					if err == nil {
						for err == nil {
							_, err = s.Recv()
						}
					}
				case 1: // fails
					s, err := client.StreamingOutputCall(ctx, streamRequest(1, "", codes.Internal))
					if err == nil {
						for err == nil {
							_, err = s.Recv()
						}
					}
				case 2: // cancelled mid-stream
					s, err := client.StreamingOutputCall(ctx, streamRequest(1, hang, codes.OK))
					if err == nil {
						s.Recv()
						cancel()
					}
				}
			}()
		}
		for range 60 {
			<-done
		}
		st := settled(t, g, addr, func(st executor.Stats) bool { return st.Successes+st.Cancelled+st.Failures >= 40 })
		assert.Equal(t, uint64(20), st.Successes)
		assert.Equal(t, uint64(20), st.Cancelled)
	})
}

func TestAQueuedStreamOpensWhenASlotFrees(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		addr, _ := startServer(t)
		cfg := defaults()
		cfg.Slots, cfg.Queue = 1, 1
		cfg.Breaker.ResetTimeout = 3 * time.Minute // above InvocationTimeout + QueueTimeout
		g := newGroup(t, executor.GroupConfig{Default: cfg})
		client := dial(t, addr, &fusegrpc.Interceptor{Group: g})

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		first, err := client.StreamingOutputCall(ctx, streamRequest(1, hang, codes.OK))
		require.NoError(t, err)
		_, err = first.Recv()
		require.NoError(t, err)

		// The second stream waits in the queue: opening it blocks until the
		// first one ends.
		opened := make(chan error, 1)
		go func() {
			s, err := client.StreamingOutputCall(context.Background(), streamRequest(2, "", codes.OK))
			for err == nil {
				_, err = s.Recv()
			}
			opened <- err
		}()
		synctest.Wait()
		require.Equal(t, 1, stats(t, g, addr).Queued, "the second stream waits in the queue")

		cancel() // the first stream ends
		require.ErrorIs(t, <-opened, io.EOF, "the queued stream ran to its end")
		st := stats(t, g, addr)
		assert.Zero(t, st.InUse)
		assert.Zero(t, st.Queued)
		assert.Equal(t, uint64(1), st.Successes)
	})
}

func TestACallerLeavingTheQueueLeavesNothingBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		addr, svc := startServer(t)
		cfg := defaults()
		cfg.Slots, cfg.Queue = 1, 1
		cfg.Breaker.ResetTimeout = 3 * time.Minute
		g := newGroup(t, executor.GroupConfig{Default: cfg})
		client := dial(t, addr, &fusegrpc.Interceptor{Group: g})

		hold, release := context.WithCancel(context.Background())
		defer release()
		_, err := client.StreamingOutputCall(hold, streamRequest(0, hang, codes.OK))
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, int64(1), svc.inside.Load(), "the first stream reached the server")

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := client.FullDuplexCall(ctx)
			done <- err
		}()
		synctest.Wait()
		require.Equal(t, 1, stats(t, g, addr).Queued, "the second stream waits in the queue")
		cancel()
		require.Equal(t, codes.Canceled, code(<-done))
		// The executor takes the call out of the queue on the cancellation,
		// on its own goroutine.
		synctest.Wait()
		require.Zero(t, stats(t, g, addr).Queued)

		release()
		st := settled(t, g, addr, func(st executor.Stats) bool { return st.Cancelled+st.Failures >= 2 })
		assert.Zero(t, svc.duplex.Load(), "the queued stream never reached the server")
		assert.Equal(t, uint64(2), st.Cancelled, "the queued stream and the one holding the slot")
		assert.Zero(t, st.Failures)
	})
}

// A stream the invocation timeout cuts off fails as a unary call does at
// its timeout: an *Error of code DeadlineExceeded wrapping
// executor.ErrTimeout. A deadline that is not the executor's (the
// caller's own, or a status the server answers) reaches the caller as it
// is.
func TestAStreamCutOffByTheInvocationTimeoutFailsAsAUnaryCallDoes(t *testing.T) {
	t.Run("the invocation timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			cfg := defaults()
			cfg.InvocationTimeout = time.Second // after the first message, which takes no virtual time
			g := newGroup(t, executor.GroupConfig{Default: cfg})
			client := dial(t, addr, &fusegrpc.Interceptor{Group: g})
			stream, err := client.StreamingOutputCall(context.Background(), streamRequest(1, hang, codes.OK))
			require.NoError(t, err)
			_, err = stream.Recv()
			require.NoError(t, err)
			_, err = stream.Recv()
			require.Equal(t, codes.DeadlineExceeded, code(err), "got %v", err)
			require.ErrorIs(t, err, executor.ErrTimeout)
			var fe *fusegrpc.Error
			require.ErrorAs(t, err, &fe, "the error a unary call gets")
			settled(t, g, addr, func(st executor.Stats) bool { return st.Timeouts == 1 })
		})
	})
	t.Run("the caller's own deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			client := dial(t, addr, &fusegrpc.Interceptor{Group: g})
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			stream, err := client.StreamingOutputCall(ctx, streamRequest(0, hang, codes.OK))
			require.NoError(t, err)
			_, err = stream.Recv()
			require.Equal(t, codes.DeadlineExceeded, code(err), "got %v", err)
			require.NotErrorIs(t, err, executor.ErrTimeout)
			settled(t, g, addr, nil)
		})
	})
	t.Run("the server's own DeadlineExceeded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			addr, _ := startServer(t)
			g := newGroup(t, executor.GroupConfig{Default: defaults()})
			client := dial(t, addr, &fusegrpc.Interceptor{Group: g})
			stream, err := client.StreamingOutputCall(context.Background(), streamRequest(0, "", codes.DeadlineExceeded))
			require.NoError(t, err)
			_, err = stream.Recv()
			require.Equal(t, codes.DeadlineExceeded, code(err), "got %v", err)
			require.NotErrorIs(t, err, executor.ErrTimeout)
			assert.Equal(t, "told to fail with DeadlineExceeded", status.Convert(err).Message(), "the server's answer")
		})
	})
}
