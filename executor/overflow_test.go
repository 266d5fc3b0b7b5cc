package executor_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

func mustExecutor(t *testing.T, g *executor.Group, name string) *executor.Executor {
	t.Helper()
	ex, err := g.Executor(name)
	require.NoError(t, err)
	return ex
}

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
				Suppliers: map[string]executor.Config{"payments": {}}})
			for i := range 3 {
				ex, err := g.Executor(fmt.Sprintf("host-%d", i))
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("host-%d", i), ex.Name())
			}
			for i := 3; i < 10; i++ {
				ex, err := g.Executor(fmt.Sprintf("host-%d", i))
				require.NoError(t, err)
				assert.True(t, strings.HasPrefix(ex.Name(), "(overflow "), ex.Name())
			}
			var own []string
			for _, n := range g.Names() {
				if !strings.HasPrefix(n, "(overflow ") {
					own = append(own, n)
				}
			}
			assert.Equal(t, []string{"host-0", "host-1", "host-2", "payments"}, own,
				"the listed supplier does not count toward the cap")
			_, found := g.Lookup("host-5")
			assert.False(t, found)
			assert.Equal(t, 1, strings.Count(logs.String(), "MaxSuppliers"), "one message a minute: %s", logs)
			assert.Contains(t, logs.String(), "supplier=host-3")

			time.Sleep(time.Minute)
			_, err := g.Executor("host-10")
			require.NoError(t, err)
			assert.Equal(t, 2, strings.Count(logs.String(), "MaxSuppliers"), logs.String())
			assert.Contains(t, logs.String(), "lookups=1\n")
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
			require.Len(t, g.Names(), 3)
			require.Equal(t, []string{"a", "b"}, g.Names()[1:], "and one overflow executor")
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

	t.Run("hung names beyond the cap cannot open a breaker that others share", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			captureLog(t)
			g := newGroup(t, executor.GroupConfig{MaxSuppliers: 1, Default: executor.Config{
				Slots: 2, InvocationTimeout: time.Second, Breaker: breaker.Config{ResetTimeout: 2 * time.Second}}})
			_, err := g.Executor("partner")
			require.NoError(t, err)
			// An attacker's hosts hang: every overflow shard they reach fills
			// with stuck calls.
			release := make(chan struct{})
			hung := map[string]int{} // hung calls per overflow executor
			for i := range 200 {
				ex, err := g.Executor(fmt.Sprintf("attacker-%d.example", i))
				require.NoError(t, err)
				if hung[ex.Name()] == 2 {
					continue // its two slots are held
				}
				hung[ex.Name()]++
				_, _ = executor.Submit(t.Context(), ex, func(ctx context.Context) (int, error) {
					select {
					case <-release:
					case <-ctx.Done():
					}
					return 0, ctx.Err()
				})
			}
			time.Sleep(900 * time.Millisecond) // stuck, not yet timed out
			for i := range 50 {
				ex, err := g.Executor(fmt.Sprintf("attacker-%d.example", i))
				require.NoError(t, err)
				_, err = executor.Submit(t.Context(), ex, func(context.Context) (int, error) { return 0, nil })
				require.NotErrorIs(t, err, breaker.ErrOpen, "%s", ex.Name())
				assert.Equal(t, breaker.Disabled, ex.Breaker().State(), "%s", ex.Name())
			}
			close(release)
			time.Sleep(2 * time.Second)
			// Once the hung calls are gone, a new name in any shard is served.
			for i := range 50 {
				v, err := executor.Do(t.Context(), mustExecutor(t, g, fmt.Sprintf("newcomer-%d", i)), func(context.Context) (int, error) { return 1, nil })
				require.NoError(t, err)
				assert.Equal(t, 1, v)
			}
		})
	})

	t.Run("a name longer than MaxNameLen makes no executor of its own", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			captureLog(t)
			g := newGroup(t, executor.GroupConfig{})
			long := strings.Repeat("h", 256*1024) + ".example"
			ex, err := g.Executor(long)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(ex.Name(), "(overflow "), ex.Name())
			_, found := g.Lookup(long)
			assert.False(t, found)
			for _, n := range g.Names() {
				assert.LessOrEqual(t, len(n), executor.MaxNameLen)
			}
			ok, err := g.Executor(strings.Repeat("h", executor.MaxNameLen))
			require.NoError(t, err)
			assert.Len(t, ok.Name(), executor.MaxNameLen, "a name of MaxNameLen bytes is its own")
		})
	})

	t.Run("New refuses a name longer than MaxNameLen, without echoing it whole", func(t *testing.T) {
		_, err := executor.New(strings.Repeat("x", 100_000), executor.Config{})
		require.ErrorContains(t, err, "MaxNameLen")
		assert.Less(t, len(err.Error()), 300, "the error stays short")
	})

	t.Run("a Strict group's error names a long name briefly", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Strict: true, Suppliers: map[string]executor.Config{"payments": {}}})
		_, err := g.Executor(strings.Repeat("x", 100_000))
		require.ErrorIs(t, err, executor.ErrUnknownSupplier)
		assert.Less(t, len(err.Error()), 400, "the error stays short")
	})

	t.Run("a name like an overflow executor's takes no place of the cap", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			captureLog(t)
			g := newGroup(t, executor.GroupConfig{MaxSuppliers: 1, IdleTimeout: time.Minute})
			for _, name := range []string{"(overflow evil", "(overflow 3)"} {
				ex, err := g.Executor(name)
				require.NoError(t, err)
				assert.Equal(t, breaker.Disabled, ex.Breaker().State(), "%s is served by an overflow executor", name)
			}
			time.Sleep(2*time.Minute + time.Second) // idle overflow executors are evicted
			ex, err := g.Executor("real-supplier")
			require.NoError(t, err)
			assert.Equal(t, "real-supplier", ex.Name(), "the cap's place is still free")
		})
	})

	t.Run("the default cap is 1,024", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			captureLog(t)
			g := newGroup(t, executor.GroupConfig{})
			for i := range 1100 {
				_, err := g.Executor(fmt.Sprintf("host-%d", i))
				require.NoError(t, err)
			}
			assert.LessOrEqual(t, len(g.Names()), 1024+16)
			_, found := g.Lookup("host-1023")
			assert.True(t, found)
			_, found = g.Lookup("host-1024")
			assert.False(t, found)
		})
	})
}
