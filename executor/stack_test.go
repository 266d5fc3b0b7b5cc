//go:build !race && amd64

// The race detector's instrumentation makes every frame larger, so the
// depths below hold in a build without it only (make test runs one: the
// library's own tests on its oldest Go); they were measured on amd64,
// whose frames other architectures' need not match.

package executor_test

import (
	"context"
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// TestACallFitsANewGoroutinesStack: a call runs and finishes within the
// stack a new goroutine starts with (2 KB), its function's own work aside,
// also when the function asks its context for a value while the caller's
// context can end. That makes the context real, and the call's end then
// cancels a context.WithCancelCause child, deep below where the call
// finishes. Once, that depth took every such call past the first stack:
// each copied its stack, and the call took 3× its time.
//
// The function notes where its frame is as it returns, and Classify,
// which runs as the call finishes (after its context ended) on the same
// goroutine, where its own is: on one stack they are less than the stack's
// size apart; had the stack been copied to one twice as large, elsewhere,
// the function's note would still name the old one.
func TestACallFitsANewGoroutinesStack(t *testing.T) {
	type key struct{}
	errAnswer := errors.New("an answer")
	var fnAt, classifyAt uintptr
	ex, err := executor.New("catalog", executor.Config{Slots: 4, Breaker: breaker.Config{
		Classify: func(error) breaker.Outcome {
			var here byte
			classifyAt = uintptr(unsafe.Pointer(&here))
			return breaker.Success
		},
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ex.Close(context.Background()) })

	forever := context.WithValue(context.Background(), key{}, "v") // a caller's context that cannot end
	cancellable, cancel := context.WithCancel(forever)
	defer cancel()
	for _, reads := range []bool{false, true} {
		fn := func(ctx context.Context) (int, error) {
			var here byte
			if reads && ctx.Value(key{}) != "v" {
				return 0, assert.AnError
			}
			// Noted after fn's own work, which may grow the stack: making
			// the real context allocates, and an allocation that has to
			// fetch a new span from the heap goes deeper than 2 KB now and
			// then (about one run in 130 of this test, when noted before).
			fnAt = uintptr(unsafe.Pointer(&here))
			return 0, errAnswer
		}
		for _, caller := range []struct {
			name string
			ctx  context.Context
		}{{"a caller's context that never ends", forever}, {"a cancellable caller's context", cancellable}} {
			// The first call makes what is kept for good: the caller's
			// map of child contexts, the executor's counters.
			for i := range 2 {
				fnAt, classifyAt = 0, 0
				f, err := executor.Submit(caller.ctx, ex, fn)
				require.NoError(t, err)
				_, err = f.Await(context.Background())
				require.ErrorIs(t, err, errAnswer, caller.name)
				require.NotZero(t, classifyAt, "Classify ran")
				if i == 1 {
					assert.Less(t, fnAt-classifyAt, uintptr(2048), "reads a value: %v, %s: the call outgrew its first stack", reads, caller.name)
				}
			}
		}
	}
}
