package callctx_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/internal/callctx"
)

// testCtx adds the Deadline an owner adds: the executor's reads Node.At on
// its clock; this one on the Unix clock.
type testCtx struct{ callctx.Ctx }

func (c *testCtx) Deadline() (time.Time, bool) { return time.Unix(0, c.Node.At), true }

func newCtx(parent context.Context) *testCtx {
	c := &testCtx{}
	c.Parent = parent
	return c
}

type key struct{}

func TestEndsAsAContextWithDeadlineWould(t *testing.T) {
	t.Run("Cancel at the deadline closes Done and sets Err and the cause", func(t *testing.T) {
		c := newCtx(context.Background())
		done := c.Done()
		require.NoError(t, c.Err())
		c.Cancel(context.DeadlineExceeded)
		<-done
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
		assert.ErrorIs(t, context.Cause(c), context.DeadlineExceeded)
	})
	t.Run("Finish ends it with Canceled, lazily when nobody watched", func(t *testing.T) {
		c := newCtx(context.Background())
		c.Finish()
		assert.Nil(t, c.Made(), "nobody watched: no State made")
		assert.ErrorIs(t, c.Err(), context.Canceled)
		<-c.Done()
	})
	t.Run("the first cause wins", func(t *testing.T) {
		c := newCtx(context.Background())
		c.Cancel(context.DeadlineExceeded)
		c.Finish()
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	})
	t.Run("the caller's cancellation ends it with the caller's cause", func(t *testing.T) {
		parent, cancel := context.WithCancelCause(context.Background())
		c := newCtx(parent)
		done := c.Done()
		why := errors.New("the caller gave up")
		cancel(why)
		<-done
		assert.ErrorIs(t, c.Err(), context.Canceled)
		assert.ErrorIs(t, context.Cause(c), why)
	})
	t.Run("Err notices a caller's cancellation nobody watched", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		c := newCtx(parent)
		cancel()
		assert.ErrorIs(t, c.Err(), context.Canceled)
		<-c.Done()
	})
	t.Run("a caller's later cancellation is not the cause of an ended context", func(t *testing.T) {
		parent, cancel := context.WithCancelCause(context.Background())
		c := newCtx(parent)
		c.Cancel(context.DeadlineExceeded)
		cancel(errors.New("too late"))
		assert.ErrorIs(t, context.Cause(c), context.DeadlineExceeded)
	})
	t.Run("Value reads the caller's values", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
		defer cancel()
		c := newCtx(parent)
		assert.Equal(t, "v", c.Value(key{}))
		c.Finish()
		assert.Equal(t, "v", c.Value(key{}))
	})
}

// Contexts derived from a Ctx and context.AfterFunc follow it without a
// goroutine each: in a bubble, nothing is left blocked once it ends.
func TestDerivedContextsFollowIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(t.Context())
		defer cancel()
		c := newCtx(parent)
		child, stop := context.WithCancel(c)
		defer stop()
		ran := make(chan struct{})
		context.AfterFunc(c, func() { close(ran) })
		stopped := context.AfterFunc(c, func() { t.Error("a stopped AfterFunc ran") })
		require.True(t, stopped(), "stop before the end reports true")
		synctest.Wait()
		select {
		case <-child.Done():
			t.Fatal("the child ended before its parent")
		default:
		}
		c.Cancel(context.DeadlineExceeded)
		<-child.Done()
		<-ran
		assert.ErrorIs(t, child.Err(), context.DeadlineExceeded, "as a child of context.WithDeadline's")
	})
}

// A Finish that races with Done, Value and AfterFunc on other goroutines
// ends the context for every one of them (a watcher left waiting is a
// deadlock the bubble reports).
func TestFinishRacesWithWatchers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for range 200 {
			parent, cancel := context.WithCancel(t.Context())
			c := newCtx(parent)
			got := make(chan struct{}, 3)
			go func() { <-c.Done(); got <- struct{}{} }()
			go func() { _ = c.Value(key{}); <-c.Done(); got <- struct{}{} }()
			go func() {
				ended := make(chan struct{})
				context.AfterFunc(c, func() { close(ended) })
				<-ended
				got <- struct{}{}
			}()
			c.Finish()
			for range 3 {
				<-got
			}
			cancel()
		}
	})
}
