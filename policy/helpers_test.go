package policy_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// newExecutor returns an executor of workers slots with a 1 s invocation
// timeout, closed when the test ends.
func newExecutor(t *testing.T, name string, workers int, edit ...func(*executor.Config)) *executor.Executor {
	t.Helper()
	cfg := executor.Config{
		Slots: workers, InvocationTimeout: time.Second,
		Breaker: breaker.Config{ConsecutiveFailures: 1000, ResetTimeout: 2 * time.Second},
	}
	for _, e := range edit {
		e(&cfg)
	}
	ex, err := executor.New(name, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ex.Close(context.Background())) })
	return ex
}

// afterError is an error with a Retry-After.
type afterError struct{ after time.Duration }

func (e afterError) Error() string             { return "429 too many requests" }
func (e afterError) RetryAfter() time.Duration { return e.after }

func breakerWithReset(d time.Duration) breaker.Config { return breaker.Config{ResetTimeout: d} }
