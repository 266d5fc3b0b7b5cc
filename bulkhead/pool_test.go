package bulkhead_test

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fusebox-go/fusebox/bulkhead"
)

// funcTask adapts a func to Task for tests; production tasks are pointers
// to structs, which cost no allocation per Go.
type funcTask func()

func (f funcTask) Run() { f() }

func newPool(t *testing.T, cfg bulkhead.PoolConfig) *bulkhead.Pool {
	t.Helper()
	p, err := bulkhead.NewPool(cfg)
	require.NoError(t, err)
	return p
}

func TestNewPoolValidatesConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     bulkhead.PoolConfig
		wantErr string
	}{
		{"the zero config is an unlimited pool", bulkhead.PoolConfig{}, ""},
		{"a sized pool is valid", bulkhead.PoolConfig{Size: 8, IdleTimeout: time.Minute}, ""},
		{"a negative size is refused", bulkhead.PoolConfig{Size: -1}, "bulkhead: PoolConfig.Size must be ≥ 0, got -1"},
		{"a negative idle timeout is refused", bulkhead.PoolConfig{IdleTimeout: -time.Second}, "bulkhead: PoolConfig.IdleTimeout must be ≥ 0, got -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := bulkhead.NewPool(tt.cfg)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				assert.Nil(t, p)
				return
			}
			require.NoError(t, err)
			require.NoError(t, p.Close(t.Context()))
		})
	}
}

func TestPoolStartsNothingUntilUsed(t *testing.T) {
	goleak.VerifyNone(t, ignoreInit) // earlier tests' workers are gone
	before := runtime.NumGoroutine()
	p := newPool(t, bulkhead.PoolConfig{})
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines after NewPool")
	require.NoError(t, p.Close(t.Context()), "Close of a never-started pool")
	assert.ErrorIs(t, p.Go(funcTask(func() {})), bulkhead.ErrPoolClosed)
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines after Close")
}

func TestPoolGoAfterCloseIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, bulkhead.PoolConfig{})
		ran := make(chan struct{})
		require.NoError(t, p.Go(funcTask(func() { close(ran) })))
		<-ran
		require.NoError(t, p.Close(t.Context()))
		assert.ErrorIs(t, p.Go(funcTask(func() {})), bulkhead.ErrPoolClosed)
		require.NoError(t, p.Close(t.Context()), "a second Close")
	})
}

func TestPoolGoRefusesANilTask(t *testing.T) {
	p := newPool(t, bulkhead.PoolConfig{})
	assert.EqualError(t, p.Go(nil), "bulkhead: Go with a nil Task")
	require.NoError(t, p.Close(t.Context()))
}

func TestPoolCloseWaitsForRunningTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, bulkhead.PoolConfig{})
		release := make(chan struct{})
		require.NoError(t, p.Go(funcTask(func() { <-release })))
		closed := make(chan error, 1)
		go func() { closed <- p.Close(context.Background()) }()
		synctest.Wait()
		require.Empty(t, closed, "Close returned while a task runs")
		assert.ErrorIs(t, p.Go(funcTask(func() {})), bulkhead.ErrPoolClosed, "Go while closing")

		close(release)
		require.NoError(t, <-closed)
	})
}

func TestPoolCloseGivesUpWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, bulkhead.PoolConfig{})
		release := make(chan struct{})
		require.NoError(t, p.Go(funcTask(func() { <-release })))

		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start := time.Now()
		assert.ErrorIs(t, p.Close(ctx), context.DeadlineExceeded)
		assert.Equal(t, time.Minute, time.Since(start))

		// Let the stuck task end: a later Close waits for the rest.
		close(release)
		require.NoError(t, p.Close(t.Context()))
	})
}

func TestPoolSurvivesAPanickingTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		panics := make(chan any, 1)
		p := newPool(t, bulkhead.PoolConfig{PanicHandler: func(v any) { panics <- v }})
		require.NoError(t, p.Go(funcTask(func() { panic("boom") })))
		assert.Equal(t, "boom", <-panics)

		ran := make(chan struct{})
		require.NoError(t, p.Go(funcTask(func() { close(ran) })), "Go after a panic")
		<-ran
		require.NoError(t, p.Close(t.Context()))
	})
}

func TestSizedPoolOverloadIsNotSaturation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, bulkhead.PoolConfig{Size: 1})
		release := make(chan struct{})
		require.NoError(t, p.Go(funcTask(func() { <-release })))

		err := p.Go(funcTask(func() {}))
		require.ErrorIs(t, err, bulkhead.ErrPoolOverload, "the only worker is busy")
		assert.NotErrorIs(t, err, bulkhead.ErrFull, "overload must not read as a supplier's saturation")

		close(release)
		require.NoError(t, p.Close(t.Context()))
	})
}

// TestPoolBuiltOutsideABubbleRunsInside builds the Pool outside a synctest
// bubble and uses it only inside: its goroutines start and stop in there,
// and idle workers expire on the bubble's fake clock.
func TestPoolBuiltOutsideABubbleRunsInside(t *testing.T) {
	p := newPool(t, bulkhead.PoolConfig{IdleTimeout: time.Hour})
	synctest.Test(t, func(t *testing.T) {
		done := make(chan int, 10)
		for i := range 10 {
			require.NoError(t, p.Go(funcTask(func() { done <- i })))
		}
		sum := 0
		for range 10 {
			sum += <-done
		}
		assert.Equal(t, 45, sum)
		time.Sleep(2 * time.Hour) // idle workers expire
		require.NoError(t, p.Close(t.Context()))
	})
}
