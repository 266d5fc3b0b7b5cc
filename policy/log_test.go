package policy_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/policy"
)

// syncBuffer is a bytes.Buffer for a logger used from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestDebugLines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out syncBuffer
		l := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
		ex := newExecutor(t, "quotes", 4)
		r, _ := policy.NewRetrier(policy.RetryConfig{Backoff: 10 * time.Millisecond, Seed: 1, Logger: l, Budget: policy.Budget{Ratio: 0.1, Floor: 1}})
		_, _ = policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { return 0, errBadGateway })
		h, _ := policy.NewHedger(policy.HedgeConfig{Delay: 10 * time.Millisecond, Logger: l})
		fn, _ := slowFirst(time.Second, time.Millisecond)
		_, err := policy.Hedge(context.Background(), h, ex, fn)
		require.NoError(t, err)
		s := out.String()
		assert.Contains(t, s, `msg="fusebox: retry" supplier=quotes attempt=1 error="502 bad gateway" wait=`)
		assert.Contains(t, s, `msg="fusebox: retry refused by the budget" supplier=quotes attempt=2`)
		assert.Contains(t, s, `msg="fusebox: hedge" supplier=quotes`)

		var none syncBuffer
		quiet := slog.New(slog.NewTextHandler(&none, nil)) // Info: no Debug lines
		r, _ = policy.NewRetrier(policy.RetryConfig{Backoff: time.Millisecond, Logger: quiet})
		_, _ = policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { return 0, errBadGateway })
		assert.Empty(t, none.String())
	})
}

// codeError is an error whose Error method reads a field through a pointer
// receiver: a typed nil panics in it.
type codeError struct{ code int }

func (e *codeError) Error() string { return fmt.Sprintf("HTTP %d", e.code) }

func TestDebugLinesSurviveAnErrorWhoseErrorMethodPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out syncBuffer
		l := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
		ex := newExecutor(t, "quotes", 4)
		r, _ := policy.NewRetrier(policy.RetryConfig{MaxAttempts: 2, Backoff: 10 * time.Millisecond, Seed: 1, Logger: l})
		typedNil := error((*codeError)(nil))
		calls := 0
		var err error
		require.NotPanics(t, func() {
			_, err = policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) {
				calls++
				if calls == 1 {
					return 0, typedNil
				}
				return 0, errBadGateway
			})
		})
		require.ErrorIs(t, err, errBadGateway, "the call went on as without a Logger")
		assert.Equal(t, 2, calls)
		assert.Contains(t, out.String(), `msg="fusebox: retry" supplier=quotes attempt=1 error="fusebox: error.Error panicked: runtime error: invalid memory address or nil pointer dereference" wait=`)
	})
}
