package fuseredis_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Shadow mode refuses nothing: a plain command on a node whose shadow
// breaker is open runs; a blocking one should too.
// Shadow mode refuses nothing, blocking commands included: with the shadow
// breaker open, BLPOP runs as SET does.
func TestShadowModeRunsBlockingCommandsWhileOpen(t *testing.T) {
	s := startRedis(t)
	g, _ := testGroup(t, func(c *executor.Config) {
		c.Shadow = true
		c.Breaker.ResetTimeout = time.Minute
		c.InvocationTimeout = 10 * time.Second
	})
	c := s.hooked(t, g)
	ctx := context.Background()
	require.NoError(t, c.Ping(ctx).Err())
	ex, err := g.Executor(s.addr())
	require.NoError(t, err)
	ex.Breaker().Trip(breaker.Manual) // the shadow breaker opens (as a saturation would)
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err(), "a plain command runs in shadow mode")
	require.NoError(t, c.RPush(ctx, "q", "x").Err())
	err = c.BLPop(ctx, 200*time.Millisecond, "q").Err()
	assert.NoError(t, err, "shadow mode refuses nothing")
	assert.Zero(t, ex.Stats().Rejected, "nothing refused")
}

type panicHook struct{}

func (panicHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (panicHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "get" {
			panic("inner hook")
		}
		return next(ctx, cmd)
	}
}
func (panicHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A panic below the hook (a hook added after it, or go-redis) gives the
// slot back, counts as a failure, and goes on up to whoever recovers it.
func TestAPanicBelowTheHookGivesTheSlotBack(t *testing.T) {
	s := startRedis(t)
	g, _ := testGroup(t)
	c := s.hooked(t, g)
	c.AddHook(panicHook{})
	ctx := context.Background()
	var recovered any
	func() {
		defer func() { recovered = recover() }() // as http.Server does
		c.Get(ctx, "k")
	}()
	assert.Equal(t, "inner hook", recovered, "the panic goes on up")
	st := stats(t, g, s.addr())
	assert.Zero(t, st.InUse, "the slot is given back")
	assert.Zero(t, st.Overdue)
	assert.Equal(t, uint64(1), st.Panics, "counted as a panic")
}
