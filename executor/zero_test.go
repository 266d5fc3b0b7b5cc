package executor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// TestNilAndZeroValuesAreErrors: an Executor, Group or Lease that its
// constructor did not make (nil, or the zero value) gets a clear error
// from every method that can return one, and never a panic; the methods
// without an error answer as for nothing (zero Stats but for a breaker
// that admits nothing, a Done that gives nothing back, a lease's context
// that has ended, a lookup that finds nothing).
func TestNilAndZeroValuesAreErrors(t *testing.T) {
	ctx := context.Background()
	fn := func(context.Context) (int, error) { return 1, nil }
	for name, ex := range map[string]*executor.Executor{"nil": nil, "zero": {}} {
		t.Run(name+" Executor", func(t *testing.T) {
			_, err := executor.Do(ctx, ex, fn)
			assert.ErrorContains(t, err, name+" ")
			_, err = executor.Submit(ctx, ex, fn)
			assert.Error(t, err)
			_, err = ex.Lease(ctx)
			assert.Error(t, err)
			assert.Error(t, ex.Reconfigure(executor.Config{Slots: 1}))
			assert.Error(t, ex.Close(ctx))
			assert.Equal(t, executor.Stats{Breaker: breaker.Stats{State: breaker.ForcedOpen}}, ex.Stats(), "it runs nothing")
			assert.Empty(t, ex.Name())
			assert.Nil(t, ex.Breaker())
			assert.Zero(t, ex.Latency(0.9))
		})
	}
	for name, g := range map[string]*executor.Group{"nil": nil, "zero": {}} {
		t.Run(name+" Group", func(t *testing.T) {
			_, err := g.Executor("a")
			assert.ErrorContains(t, err, name+" ")
			_, err = executor.DoIn(ctx, g, "a", fn)
			assert.ErrorContains(t, err, name+" ")
			_, err = executor.LeaseIn(ctx, g, "a")
			assert.Error(t, err)
			assert.Error(t, g.Reconfigure(executor.GroupConfig{}))
			if g == nil {
				assert.ErrorContains(t, g.Close(ctx), "nil *Group")
			}
			ex, ok := g.Lookup("a")
			assert.Nil(t, ex)
			assert.False(t, ok)
			assert.Empty(t, g.Names())
			g.Subscribe(func(breaker.Event) {})()
		})
	}
	t.Run("nil and zero Lease", func(t *testing.T) {
		var nilLease *executor.Lease
		assert.NotPanics(t, func() { nilLease.Done(nil) })
		assert.NotPanics(t, func() { (&executor.Lease{}).Done(nil) })
		// The context of a lease that Lease refused has ended, so that
		// work started under it by mistake stops at once instead of
		// running outside the bulkhead.
		for _, l := range []*executor.Lease{nilLease, {}} {
			ctx := l.Context()
			assert.ErrorIs(t, ctx.Err(), context.Canceled)
			assert.ErrorContains(t, context.Cause(ctx), "nil or zero Lease")
			<-ctx.Done()
		}
	})
	t.Run("Close with a nil context", func(t *testing.T) {
		ex, err := executor.New("s", executor.Config{Slots: 1})
		require.NoError(t, err)
		//lint:ignore SA1012 the nil context is the point
		assert.ErrorContains(t, ex.Close(nil), "nil context")
		assert.NoError(t, ex.Close(ctx))
	})
	t.Run("the log listeners with a nil logger use slog.Default", func(t *testing.T) {
		assert.NotPanics(t, func() { executor.LogBusy(nil, 0)(executor.Busy{Supplier: "s"}) })
		assert.NotPanics(t, func() {
			executor.LogTransitions(nil)(breaker.Event{Name: "s", From: breaker.Closed, To: breaker.Open, Reason: breaker.Manual})
		})
	})
}
