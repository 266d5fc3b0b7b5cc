package breaker_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

func TestGuard(t *testing.T) {
	t.Run("returns what fn returns", func(t *testing.T) {
		boom := errors.New("boom")
		v, err := breaker.Guard("fn", func() (int, error) { return 7, boom }, nil)
		assert.Equal(t, 7, v)
		assert.Equal(t, boom, err)
	})
	t.Run("turns a panic into a PanicError naming the callback", func(t *testing.T) {
		v, err := breaker.Guard("user.Key", func() (string, error) { panic("bug") }, func(error) { t.Error("onGoexit called for a panic") })
		assert.Empty(t, v)
		var pe *breaker.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "user.Key", pe.Callback)
		assert.Equal(t, "bug", pe.Value)
		assert.NotEmpty(t, pe.Stack)
	})
	t.Run("a panic(nil) is a panic too", func(t *testing.T) {
		_, err := breaker.Guard("fn", func() (int, error) { panic(nil) }, func(error) { t.Error("onGoexit called for a panic") })
		var pe *breaker.PanicError
		require.ErrorAs(t, err, &pe)
		assert.NotEqual(t, breaker.ErrGoexit, pe.Value)
	})
	t.Run("calls onGoexit before a Goexit goes on", func(t *testing.T) {
		var got error
		returned := false
		var wg sync.WaitGroup
		wg.Go(func() {
			_, _ = breaker.Guard("fn", func() (int, error) { runtime.Goexit(); return 0, nil }, func(err error) { got = err })
			returned = true
		})
		wg.Wait()
		assert.False(t, returned, "the Goexit went on")
		var pe *breaker.PanicError
		require.ErrorAs(t, got, &pe)
		assert.Equal(t, breaker.ErrGoexit, pe.Value)
		assert.Equal(t, "fn", pe.Callback)
	})
}
