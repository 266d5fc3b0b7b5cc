package breaker_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

// 10,000 idle breakers: no goroutine at all and at most 256 B of heap each.
func TestIdleFootprint(t *testing.T) {
	const n = 10_000
	goroutines := runtime.NumGoroutine()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	all := make([]*breaker.Breaker, n)
	for i := range all {
		b, err := breaker.New(breaker.Config{Name: "supplier", OnTransition: func(breaker.Event) {}})
		require.NoError(t, err)
		all[i] = b
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perBreaker := (after.HeapAlloc - before.HeapAlloc - n*8) / n // minus the slice itself
	t.Logf("heap per idle breaker: %d B", perBreaker)
	assert.LessOrEqual(t, perBreaker, uint64(256))
	assert.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "no goroutine per breaker")
	for _, b := range all {
		require.Equal(t, breaker.Closed, b.State())
	}
}
