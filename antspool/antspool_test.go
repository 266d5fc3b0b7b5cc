package antspool_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/panjf2000/ants/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fusebox-go/fusebox/antspool"
	"github.com/fusebox-go/fusebox/executor"
)

// Importing ants starts its default pool (two goroutines) at program start;
// that is ants' own and the reason this adapter is a module of its own.
// Everything started after TestMain began must be gone at the end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}

func newPool(t *testing.T, size int) *ants.Pool {
	t.Helper()
	p, err := ants.NewPool(size, ants.WithNonblocking(true))
	require.NoError(t, err)
	t.Cleanup(p.Release)
	return p
}

func TestCallsRunOnThePool(t *testing.T) {
	pool := newPool(t, 4)
	g, err := executor.NewGroup(executor.GroupConfig{Runner: antspool.New(pool)})
	require.NoError(t, err)
	defer g.Close(context.Background())

	var seen atomic.Int64
	for i := range 20 {
		v, err := executor.DoIn(context.Background(), g, "payments", func(context.Context) (int, error) {
			seen.Add(1)
			return i, nil
		})
		require.NoError(t, err)
		assert.Equal(t, i, v)
	}
	assert.Equal(t, int64(20), seen.Load())
}

func TestACallThePoolRefusesEndsWithItsErrorAndIsIgnored(t *testing.T) {
	pool := newPool(t, 1)
	g, err := executor.NewGroup(executor.GroupConfig{Runner: antspool.New(pool),
		Default: executor.Config{InvocationTimeout: time.Second}})
	require.NoError(t, err)
	defer g.Close(context.Background())

	release := make(chan struct{})
	started := make(chan struct{})
	first, err := executor.SubmitIn(context.Background(), g, "payments", func(context.Context) (int, error) {
		close(started)
		<-release
		return 1, nil
	})
	require.NoError(t, err)
	<-started
	_, err = executor.DoIn(context.Background(), g, "search", func(context.Context) (int, error) { return 2, nil })
	require.ErrorIs(t, err, ants.ErrPoolOverload, "the pool's only worker is busy")
	ex, err := g.Executor("search")
	require.NoError(t, err)
	st := ex.Stats()
	assert.Equal(t, uint64(1), st.Ignored, "the supplier was never asked")
	assert.Zero(t, st.Failures)
	assert.Zero(t, st.InUse, "its slot is free again")

	close(release)
	v, err := first.Await(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, v)
}

// The adapter changes where calls run, not what they mean: a timeout is
// still a timeout at the exact deadline.
func TestTimeoutsOnThePoolFireAtTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool, err := ants.NewPool(4, ants.WithNonblocking(true), ants.WithDisablePurge(true))
		require.NoError(t, err)
		defer pool.Release()
		g, err := executor.NewGroup(executor.GroupConfig{Runner: antspool.New(pool),
			Default: executor.Config{InvocationTimeout: time.Second}})
		require.NoError(t, err)
		start := time.Now()
		_, err = executor.DoIn(context.Background(), g, "payments", func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 0, ctx.Err()
		})
		assert.ErrorIs(t, err, executor.ErrTimeout)
		assert.Equal(t, time.Second, time.Since(start))
		require.NoError(t, g.Close(context.Background()))
	})
}

// A bounded pool made without ants.WithNonblocking(true) would hold the
// submitter, past its own deadline, once full: the Runner refuses it
// outright, with an error that says how to make the pool, so that no call
// ever waits on it. An unbounded pool never waits, and is used.
func TestABlockingPoolIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options []ants.Option
	}{
		{"by default", nil},
		{"with MaxBlockingTasks", []ants.Option{ants.WithMaxBlockingTasks(1)}},
		{"preallocated", []ants.Option{ants.WithPreAlloc(true)}},
		{"explicitly", []ants.Option{ants.WithNonblocking(false)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, err := ants.NewPool(1, tc.options...)
			require.NoError(t, err)
			defer pool.Release()
			runner := antspool.New(pool)
			const want = "antspool: New was given a pool that blocks when it is full: make it with ants.WithNonblocking(true)"
			require.EqualError(t, runner.Go(func() { t.Error("fn ran") }), want)

			g, err := executor.NewGroup(executor.GroupConfig{Runner: runner})
			require.NoError(t, err)
			defer g.Close(context.Background())
			_, err = executor.DoIn(context.Background(), g, "payments", func(context.Context) (int, error) {
				t.Error("the call ran")
				return 0, nil
			})
			require.ErrorContains(t, err, want)
		})
	}

	t.Run("unless it is unbounded", func(t *testing.T) {
		pool, err := ants.NewPool(-1)
		require.NoError(t, err)
		defer pool.Release()
		g, err := executor.NewGroup(executor.GroupConfig{Runner: antspool.New(pool)})
		require.NoError(t, err)
		defer g.Close(context.Background())
		v, err := executor.DoIn(context.Background(), g, "payments", func(context.Context) (int, error) { return 1, nil })
		require.NoError(t, err)
		assert.Equal(t, 1, v)
	})
}

// A Runner without a pool refuses each call with an error naming the
// mistake, which the executor ends the call with; Go panicked on the nil
// pool, and every call failed with that panic.
func TestARunnerWithoutAPoolRefusesEveryCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		runner *antspool.Runner
		want   string
	}{
		{"New(nil)", antspool.New(nil), "antspool: New was given a nil pool"},
		{"a zero Runner", &antspool.Runner{}, "antspool: a Runner must be made by antspool.New"},
		{"a nil Runner", nil, "antspool: a Runner must be made by antspool.New"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.runner.Go(func() { t.Error("fn ran") })
			require.EqualError(t, err, tc.want)

			g, err := executor.NewGroup(executor.GroupConfig{Runner: tc.runner})
			require.NoError(t, err)
			defer g.Close(context.Background())
			_, err = executor.DoIn(context.Background(), g, "payments", func(context.Context) (int, error) {
				t.Error("the call ran")
				return 0, nil
			})
			require.ErrorContains(t, err, tc.want)
			assert.NotContains(t, err.Error(), "panicked")
		})
	}
}
