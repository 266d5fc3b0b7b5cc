package fusegrpc_test

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusegrpc"
)

// TestOpenStreamsCostNoGoroutine opens 50 server streams and reads only
// their first message: none of the process's goroutines may be waiting
// inside the library for a stream to end (grpc's own stream goroutines
// are there with or without the interceptor). Each stream still holds its
// slot until it ends.
func TestOpenStreamsCostNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 50
		addr, _ := startServer(t)
		cfg := defaults()
		cfg.Slots = n
		g := newGroup(t, executor.GroupConfig{Default: cfg})
		client := dial(t, addr, &fusegrpc.Interceptor{Group: g})

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		streams := make([]testpb.TestService_StreamingOutputCallClient, 0, n)
		for range n {
			s, err := client.StreamingOutputCall(ctx, streamRequest(1, hang, codes.OK))
			require.NoError(t, err)
			_, err = s.Recv()
			require.NoError(t, err)
			streams = append(streams, s)
		}
		assert.Equal(t, n, stats(t, g, addr).InUse, "every open stream holds its slot")
		assert.Zero(t, libraryGoroutines(), "goroutines inside the library with %d streams open", n)

		cancel()
		for _, s := range streams {
			_, err := s.Recv()
			require.Equal(t, codes.Canceled, code(err), "got %v", err)
		}
		st := stats(t, g, addr)
		assert.Zero(t, st.InUse, "each Recv that saw the end gave its slot back before it returned")
		assert.Equal(t, uint64(n), st.Cancelled)
	})
}

// libraryGoroutines counts the goroutines with a frame of the library in
// their stack, other than the tests' own.
func libraryGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("github.com/fusebox-go/fusebox/")) && !bytes.Contains(g, []byte("_test.")) {
			count++
		}
	}
	return count
}
