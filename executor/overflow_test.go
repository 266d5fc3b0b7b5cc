package executor_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
)

// captureLog sends slog.Default to a buffer for the test.
func captureLog(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

func TestMaxSuppliers(t *testing.T) {
	t.Run("names beyond the cap share the overflow executor, and it is logged once a minute", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			logs := captureLog(t)
			g := newGroup(t, executor.GroupConfig{MaxSuppliers: 3,
				Dependencies: map[string]executor.Config{"payments": {}}})
			for i := range 3 {
				ex, err := g.Executor(fmt.Sprintf("host-%d", i))
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("host-%d", i), ex.Name())
			}
			for i := 3; i < 10; i++ {
				ex, err := g.Executor(fmt.Sprintf("host-%d", i))
				require.NoError(t, err)
				assert.Equal(t, "(overflow)", ex.Name())
			}
			assert.Equal(t, []string{"(overflow)", "host-0", "host-1", "host-2", "payments"}, g.Names(),
				"the listed supplier does not count toward the cap")
			_, found := g.Lookup("host-5")
			assert.False(t, found)
			assert.Equal(t, 1, strings.Count(logs.String(), "MaxSuppliers"), "one message a minute: %s", logs)
			assert.Contains(t, logs.String(), "supplier=host-3")

			time.Sleep(time.Minute)
			_, err := g.Executor("host-10")
			require.NoError(t, err)
			assert.Equal(t, 2, strings.Count(logs.String(), "MaxSuppliers"), logs.String())
			assert.Contains(t, logs.String(), "lookups=1 ")
		})
	})

	t.Run("eviction makes room again", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			captureLog(t)
			g := newGroup(t, executor.GroupConfig{MaxSuppliers: 2, IdleTimeout: time.Minute})
			for _, name := range []string{"a", "b", "c"} {
				_, err := g.Executor(name)
				require.NoError(t, err)
			}
			require.Equal(t, []string{"(overflow)", "a", "b"}, g.Names())
			time.Sleep(2*time.Minute + time.Second) // two sweeps: unused since the first
			_, err := g.Executor("x")
			require.NoError(t, err)
			ex, err := g.Executor("d")
			require.NoError(t, err)
			assert.Equal(t, "d", ex.Name(), "the idle ones were evicted: %v", g.Names())
		})
	})

	t.Run("a negative cap is an error naming the field", func(t *testing.T) {
		_, err := executor.NewGroup(executor.GroupConfig{MaxSuppliers: -1})
		require.ErrorContains(t, err, "GroupConfig.MaxSuppliers must be ≥ 0")
	})
}
