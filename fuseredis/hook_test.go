package fuseredis_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseredis"
)

// TestRepliesAreAnswers sends commands whose replies are errors of the
// server and checks which the breaker counts as successes (the node
// answered) and which as failures (the node cannot serve).
func TestRepliesAreAnswers(t *testing.T) {
	s := startRedis(t)
	g, _ := testGroup(t)
	c := s.hooked(t, g)
	ctx := context.Background()
	require.NoError(t, c.Set(ctx, "str", "v", 0).Err())
	reply := func(msg string) *redis.Cmd { // the server replies with error msg
		return c.Eval(ctx, "return redis.error_reply(ARGV[1])", nil, msg)
	}
	tests := []struct {
		name    string
		run     func() error
		failure bool
	}{
		{"a missing key (redis.Nil) is an answer", func() error { return c.Get(ctx, "missing").Err() }, false},
		{"WRONGTYPE is an answer", func() error { return c.LPush(ctx, "str", "x").Err() }, false},
		{"a syntax error is an answer", func() error { return c.Do(ctx, "set", "k").Err() }, false},
		{"a script error is an answer", func() error { return c.Eval(ctx, "return redis.call('nosuchcommand')", nil).Err() }, false},
		{"NOSCRIPT is an answer", func() error { return c.EvalSha(ctx, "0123456789012345678901234567890123456789", nil).Err() }, false},
		{"a MOVED redirection is an answer", func() error { return reply("MOVED 3999 127.0.0.1:6381").Err() }, false},
		{"an ASK redirection is an answer", func() error { return reply("ASK 3999 127.0.0.1:6381").Err() }, false},
		{"LOADING is a failure", func() error { return reply("LOADING Redis is loading the dataset in memory").Err() }, true},
		{"BUSY is a failure", func() error { return reply("BUSY Redis is busy running a script").Err() }, true},
		{"CLUSTERDOWN is a failure", func() error { return reply("CLUSTERDOWN The cluster is down").Err() }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := stats(t, g, s.addr())
			err := tt.run()
			require.Error(t, err, "the command returns the server's reply")
			after := stats(t, g, s.addr())
			if tt.failure {
				assert.Equal(t, before.Failures+1, after.Failures, "got %d failures, want one more (%v)", after.Failures, err)
			} else {
				assert.Equal(t, before.Successes+1, after.Successes, "got %d successes, want one more (%v)", after.Successes, err)
				assert.Equal(t, before.Failures, after.Failures)
			}
		})
	}
	// The failures were not in a row of five: the breaker stayed closed.
	assert.Equal(t, breaker.Closed, stats(t, g, s.addr()).Breaker.State)
}

// TestBlockingCommandsHoldNoSlot runs more blocking commands than the node
// has slots, for longer than the stuck criterion's age and the invocation
// timeout: none takes a slot, the node's other commands are served, and the
// breaker stays closed; once the breaker is open they are refused.
func TestBlockingCommandsHoldNoSlot(t *testing.T) {
	t.Parallel()
	s := startRedis(t)
	g, rec := testGroup(t, func(c *executor.Config) { c.Slots = 2 })
	c := s.hooked(t, g)
	ctx := context.Background()
	require.NoError(t, c.Ping(ctx).Err())

	blockers := []func() error{
		func() error { return c.BLPop(ctx, 1200*time.Millisecond, "q1").Err() },
		func() error { return c.BRPop(ctx, 1200*time.Millisecond, "q2").Err() },
		func() error { return c.BZPopMin(ctx, 1200*time.Millisecond, "z").Err() },
		func() error {
			return c.XRead(ctx, &redis.XReadArgs{Streams: []string{"st", "$"}, Block: 1200 * time.Millisecond}).Err()
		},
	}
	var wg sync.WaitGroup
	errs := make([]error, len(blockers))
	for i, b := range blockers {
		wg.Go(func() { errs[i] = b() })
	}
	// A subscription waiting for messages holds no slot either.
	ps := c.Subscribe(ctx, "news")
	defer func() { _ = ps.Close() }()
	_, err := ps.Receive(ctx) // the subscription's confirmation
	require.NoError(t, err)
	var psErr error
	wg.Go(func() { _, psErr = ps.ReceiveTimeout(ctx, 1200*time.Millisecond) })
	// Redis itself says when every blocker waits in it: the checks below
	// run while they do, each one confirmed by Redis afterwards.
	ctl := s.plain(t)
	blocked := func() bool {
		info, err := ctl.Info(ctx, "clients").Result()
		return err == nil && strings.Contains(info, fmt.Sprintf("blocked_clients:%d\r", len(blockers)))
	}
	eventually(t, time.Second, "every blocker waits in Redis", blocked)
	for range 5 {
		assert.Zero(t, stats(t, g, s.addr()).InUse, "a blocking command holds no slot")
		require.NoError(t, c.Set(ctx, "k", "v", 0).Err(), "the node's other commands are served")
		require.True(t, blocked(), "checked while the blockers wait")
	}
	wg.Wait()
	for i, err := range errs {
		assert.ErrorIs(t, err, redis.Nil, "blocker %d timed out with an answer", i)
	}
	assert.Error(t, psErr, "no message came")
	assert.Empty(t, transitionsOf(rec.Events(), s.addr()), "the breaker never moved")
	assert.Zero(t, stats(t, g, s.addr()).Failures)

	ex, _ := g.Lookup(s.addr())
	ex.Breaker().Trip(breaker.Manual)
	began := time.Now()
	err = c.BLPop(ctx, 5*time.Second, "q1").Err()
	require.ErrorIs(t, err, breaker.ErrOpen)
	assert.Less(t, time.Since(began), time.Second, "refused at once, not after its block time")
	assert.Contains(t, err.Error(), s.addr())

	_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "k", "v", 0)
		p.BLPop(ctx, time.Second, "q1")
		return nil
	})
	require.ErrorIs(t, err, breaker.ErrOpen, "a refused blocking pipeline")

	// After the reset timeout a client of blocking commands alone still
	// lets the breaker close: the hook probes with a PING on its behalf.
	ex.Breaker().Trip(breaker.Manual)
	eventually(t, 10*time.Second, "a blocking command gets through once the node answers a probe", func() bool {
		err := c.BLPop(ctx, time.Second, "q1").Err()
		if errors.Is(err, breaker.ErrOpen) {
			return false
		}
		require.ErrorIs(t, err, redis.Nil)
		return true
	})
	assert.Equal(t, breaker.Closed, stats(t, g, s.addr()).Breaker.State)
	// A pipeline that holds a blocking command: the others keep their own
	// results when the blocking one times out.
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "k", "v", 0)
		p.BLPop(ctx, time.Second, "q1")
		return nil
	})
	require.ErrorIs(t, err, redis.Nil)
	require.Len(t, cmds, 2)
	assert.NoError(t, cmds[0].Err(), "the SET keeps its own result")
	assert.ErrorIs(t, cmds[1].Err(), redis.Nil)
	_, closed := firstTransition(rec.Events(), s.addr(), breaker.Closed)
	assert.True(t, closed, "the probe closed the breaker")
	assert.Zero(t, stats(t, g, s.addr()).InUse)
}

// TestPipelineHoldsOneSlot pauses the node under a pipeline and a
// transaction of ten commands each: each holds one slot while it waits, and
// is one success; a refused pipeline sends nothing and every command
// carries the refusal.
func TestPipelineHoldsOneSlot(t *testing.T) {
	t.Parallel()
	s := startRedis(t)
	// An invocation timeout well beyond the pause, so that a loaded
	// machine cannot make the paused pipelines time out.
	g, _ := testGroup(t, func(c *executor.Config) {
		c.InvocationTimeout = 5 * time.Second
		c.Breaker.ResetTimeout = 6 * time.Second
	})
	c := s.hooked(t, g, func(o *redis.Options) { o.ReadTimeout = 6 * time.Second })
	ctl := s.plain(t)
	ctx := context.Background()
	require.NoError(t, c.Ping(ctx).Err())

	before := stats(t, g, s.addr())
	require.NoError(t, ctl.Do(ctx, "client", "pause", 1500, "all").Err())
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, pipe := range []redis.Pipeliner{c.Pipeline(), c.TxPipeline()} {
		wg.Go(func() {
			for range 10 {
				pipe.Incr(ctx, "n")
			}
			_, errs[i] = pipe.Exec(ctx)
		})
	}
	eventually(t, 5*time.Second, "the paused pipeline and transaction hold a slot each", func() bool {
		return stats(t, g, s.addr()).InUse == 2
	})
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	after := stats(t, g, s.addr())
	assert.Zero(t, after.InUse)
	assert.Equal(t, before.Successes+2, after.Successes, "two pipelines, two calls")

	ex, _ := g.Lookup(s.addr())
	ex.Breaker().Trip(breaker.Manual)
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "n")
		p.Incr(ctx, "n")
		return nil
	})
	require.ErrorIs(t, err, breaker.ErrOpen)
	require.Len(t, cmds, 2)
	for _, cmd := range cmds {
		assert.ErrorIs(t, cmd.Err(), breaker.ErrOpen)
	}
	ex.Breaker().Reset()
	n, err := ctl.Get(ctx, "n").Int()
	require.NoError(t, err)
	assert.Equal(t, 20, n, "the refused pipeline sent nothing")
}

// TestDialFailuresOutsideCommandsCount subscribes to a node that refuses
// connections: the pub/sub connection's dials are no command's, and the
// hook counts them, so the breaker opens and the next command is refused.
func TestDialFailuresOutsideCommandsCount(t *testing.T) {
	s := startRedis(t)
	g, rec := testGroup(t)
	c := s.plain(t)
	h := fuseredis.New(g, c.Options().Addr)
	c.AddHook(h)
	ctx := context.Background()
	require.NoError(t, c.Ping(ctx).Err())
	s.stop()

	for i := 0; i < 10; i++ {
		if _, ok := firstTransition(rec.Events(), s.addr(), breaker.Open); ok {
			break
		}
		ps := c.Subscribe(ctx, "news")
		_, err := ps.Receive(ctx)
		assert.Error(t, err)
		require.NoError(t, ps.Close())
		// The verdicts of failed dials are reached on goroutines of their
		// own: the next attempt waits for this one's, or ten attempts can
		// all end before the fifth failure is recorded.
		fuseredis.WaitDialVerdicts(h)
	}
	eventually(t, 2*time.Second, "the breaker opened on failed dials", func() bool {
		_, ok := firstTransition(rec.Events(), s.addr(), breaker.Open)
		return ok
	})
	trip, ok := firstTransition(rec.Events(), s.addr(), breaker.Open)
	require.True(t, ok, "the breaker opened on failed dials")
	assert.Equal(t, breaker.ConsecutiveFailures, trip.Reason)
	assert.Contains(t, trip.Err.Error(), "connection refused")
	assert.Zero(t, stats(t, g, s.addr()).InUse)
	require.ErrorIs(t, c.Get(ctx, "k").Err(), breaker.ErrOpen)
}

// recordingGroup is a test group whose breakers stay closed (an open
// breaker needs no more evidence, and the hook records no failed dial
// then), and the errors its breakers have recorded so far.
func recordingGroup(t *testing.T) (*executor.Group, func() []error) {
	var mu sync.Mutex
	var recorded []error
	g, _ := testGroup(t, func(c *executor.Config) {
		c.Breaker.ConsecutiveFailures = 1000
		c.Breaker.Classify = func(err error) breaker.Outcome {
			mu.Lock()
			defer mu.Unlock()
			recorded = append(recorded, err)
			return breaker.DefaultClassify(err)
		}
	})
	return g, func() []error {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(recorded)
	}
}

// TestADialInsideACommandCountsOnce sends one command to a node that
// refuses connections: go-redis (v9.15 and later) dials for it on a
// goroutine of its own, out of the command's context, and retries, even
// after the command has given up; those dials are the command's, and the
// node's breaker records one failure, the command's, not one per dial.
func TestADialInsideACommandCountsOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline time.Duration
		// dial is the dial's own deadline, which bounds go-redis's
		// retries of it.
		dial time.Duration
		want string // in the command's error
	}{
		// The command waits for every try of the dial, each refused: a
		// dial deadline of seconds, so that a loaded machine, which may
		// not run a try's connect within a few hundred milliseconds,
		// still ends the dial with its refusals rather than with an i/o
		// timeout.
		{"a command that waits for the dial's end", 10 * time.Second, 5 * time.Second, "connection refused"},
		// Its deadline, or with go-redis before v9.15 (one dial, on the
		// command's goroutine) the refusal, whichever comes first. The
		// dial's retries go on after the command: their deadline is well
		// inside the second after the command for which a failed dial is
		// still the command's, however late a loaded machine runs the
		// retries' timers.
		{"a command whose caller gives up first", 50 * time.Millisecond, 300 * time.Millisecond, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, recorded := recordingGroup(t)
			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t)) // nothing listens
			c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: tc.dial, MaxRetries: -1})
			t.Cleanup(func() { _ = c.Close() })
			w := &dialWatch{}
			c.AddHook(w) // outside the hook under test: sees each dial after it
			h := fuseredis.New(g, addr)
			c.AddHook(h)

			ctx, cancel := context.WithTimeout(context.Background(), tc.deadline)
			defer cancel()
			require.ErrorContains(t, c.Get(ctx, "k").Err(), tc.want)
			// go-redis may still be retrying the dial of a command that
			// gave up: its retries end with the dial's context (its own,
			// or before v9.15 the command's, which ends with the caller's),
			// and each has been seen by the hook once the watch has seen
			// it end.
			cancel()
			<-w.first().Done()
			w.running.Wait()
			fuseredis.WaitDialVerdicts(h)
			require.GreaterOrEqual(t, w.dials.Load(), int32(1))
			assert.Len(t, recorded(), 1, "one command, %d dials: one failure, the command's (got %v)", w.dials.Load(), recorded())
			assert.EqualValues(t, 1, stats(t, g, addr).Failures)
		})
	}
}

// dialWatch is a go-redis hook that counts the dials that pass through it,
// keeps the context of the first, and knows the ones still running.
type dialWatch struct {
	dials   atomic.Int32
	running sync.WaitGroup
	mu      sync.Mutex
	ctx     context.Context
}

func (w *dialWatch) first() context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ctx
}

func (w *dialWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		w.running.Add(1)
		defer w.running.Done()
		if w.dials.Add(1) == 1 {
			w.mu.Lock()
			w.ctx = ctx
			w.mu.Unlock()
		}
		return next(ctx, network, addr)
	}
}

func (w *dialWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (w *dialWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestCallerCancellationIsIgnored cancels a command that waits, on a
// paused node, for the client's one connection: the caller gets its
// cancellation, and the breaker counts nothing against the node. (go-redis
// does not interrupt a read in progress when its context is cancelled; it
// gives up where it waits for the context: for a connection.)
func TestCallerCancellationIsIgnored(t *testing.T) {
	t.Parallel()
	s := startRedis(t)
	g, _ := testGroup(t, func(c *executor.Config) {
		c.InvocationTimeout = 5 * time.Second
		c.Breaker.ResetTimeout = 6 * time.Second
	})
	c := s.hooked(t, g, func(o *redis.Options) {
		o.PoolSize, o.PoolTimeout, o.ReadTimeout = 1, 5*time.Second, 6*time.Second
	})
	ctl := s.plain(t)
	require.NoError(t, c.Ping(context.Background()).Err())
	before := stats(t, g, s.addr())

	require.NoError(t, ctl.Do(context.Background(), "client", "pause", 1500, "all").Err())
	holder := make(chan error, 1)
	go func() { holder <- c.Get(context.Background(), "k").Err() }()
	eventually(t, 5*time.Second, "the first command holds the connection", func() bool { return inUse(c) == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	err := c.Get(ctx, "k").Err()
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, <-holder, redis.Nil)
	eventually(t, 5*time.Second, "the slots are back", func() bool { return stats(t, g, s.addr()).InUse == 0 })
	after := stats(t, g, s.addr())
	assert.Equal(t, before.Failures, after.Failures, "got %d failures, want %d", after.Failures, before.Failures)
	assert.Equal(t, before.Cancelled+1, after.Cancelled)
	assert.Equal(t, before.Successes+1, after.Successes)
}

// TestPoolTimeoutIsIgnored gives a client one connection and the node four
// slots: while the node is paused, the commands that wait for the
// connection get go-redis's pool timeout, which says nothing against the
// node.
func TestPoolTimeoutIsIgnored(t *testing.T) {
	t.Parallel()
	s := startRedis(t)
	g, rec := testGroup(t, func(c *executor.Config) {
		c.InvocationTimeout = 5 * time.Second
		c.Breaker.ResetTimeout = 6 * time.Second
	})
	c := s.hooked(t, g, func(o *redis.Options) {
		o.PoolSize, o.PoolTimeout, o.ReadTimeout = 1, 100*time.Millisecond, 6*time.Second
	})
	ctl := s.plain(t)
	ctx := context.Background()
	require.NoError(t, c.Ping(ctx).Err())

	require.NoError(t, ctl.Do(ctx, "client", "pause", 1500, "all").Err())
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = c.Get(ctx, "k").Err() })
	}
	wg.Wait()
	timeouts := 0
	for _, err := range errs {
		if err != nil && err.Error() == "redis: connection pool timeout" {
			timeouts++
		}
	}
	require.Positive(t, timeouts, "some commands met the pool timeout: %v", errs)
	st := stats(t, g, s.addr())
	assert.Zero(t, st.Failures)
	assert.GreaterOrEqual(t, st.Ignored, uint64(timeouts))
	assert.Empty(t, transitionsOf(rec.Events(), s.addr()))
}

// TestClassifyOverrides counts redis.Nil as a failure with a Classify of
// its own; a Classify that panics makes a failure, and the caller still
// gets the command's own result.
func TestClassifyOverrides(t *testing.T) {
	s := startRedis(t)
	g, rec := testGroup(t)
	c := s.plain(t)
	h := fuseredis.New(g, s.addr())
	h.Classify = func(err error) error {
		if errors.Is(err, redis.Nil) {
			return err
		}
		return fuseredis.DefaultClassify(err)
	}
	c.AddHook(h)
	ctx := context.Background()
	for range 5 {
		require.ErrorIs(t, c.Get(ctx, "missing").Err(), redis.Nil)
	}
	trip, ok := firstTransition(rec.Events(), s.addr(), breaker.Open)
	require.True(t, ok, "five misses in a row opened the breaker")
	assert.Equal(t, breaker.ConsecutiveFailures, trip.Reason)

	s2 := startRedis(t)
	c2 := s2.plain(t)
	h2 := fuseredis.New(g, s2.addr())
	h2.Classify = func(error) error { panic("classifier bug") }
	c2.AddHook(h2)
	require.ErrorIs(t, c2.Get(ctx, "missing").Err(), redis.Nil)
	assert.Equal(t, uint64(1), stats(t, g, s2.addr()).Failures)
}

// TestBadConfiguration fails every command with an error naming the field,
// or for a nil *Hook naming fuseredis.New: a command, a pipeline and a
// blocking command.
func TestBadConfiguration(t *testing.T) {
	s := startRedis(t)
	g, _ := testGroup(t)
	ctx := context.Background()
	tests := []struct {
		name string
		hook *fuseredis.Hook
		want string
	}{
		{"a hook without a group names Group", fuseredis.New(nil, s.addr()), "Hook.Group"},
		{"a hook without an address names Addr", fuseredis.New(g, ""), "Hook.Addr"},
		{"a hook with a blank address names Addr", fuseredis.New(g, "  "), "Hook.Addr"},
		{"a hook with a blank supplier names Supplier", &fuseredis.Hook{Group: g, Addr: s.addr(), Supplier: " "}, "Hook.Supplier"},
		{"a nil hook names New", nil, "nil *Hook (make it with fuseredis.New)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := s.plain(t)
			c.AddHook(tt.hook)
			err := c.Get(ctx, "k").Err()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error { p.Get(ctx, "k"); return nil })
			assert.ErrorContains(t, err, tt.want)
			assert.ErrorContains(t, c.BLPop(ctx, time.Second, "empty").Err(), tt.want)
		})
	}
}

// TestNewConnectionTakesOneSlot sends the first command of a client to a
// node of one slot: the connection set-up go-redis does inside it (a dial,
// and in newer versions HELLO and CLIENT SETINFO through the same hooks) is
// part of that command, not calls of their own.
func TestNewConnectionTakesOneSlot(t *testing.T) {
	s := startRedis(t)
	g, _ := testGroup(t, func(c *executor.Config) { c.Slots = 1 })
	c := s.hooked(t, g, func(o *redis.Options) { o.Password = ""; o.DB = 1 })
	ctx := context.Background()
	require.ErrorIs(t, c.Get(ctx, "k").Err(), redis.Nil)
	st := stats(t, g, s.addr())
	assert.Equal(t, uint64(1), st.Successes, "one command, one call")
	assert.Zero(t, st.Rejected.Busy+st.Failures)
}

// TestClassifyGoexitGivesTheSlotBack: a Hook.Classify that ends its
// goroutine (runtime.Goexit, as t.FailNow does) never returns a verdict.
// The command's slot is given back all the same (a blocking command's
// breaker permit ended), the command counted as a failure, and the Goexit
// goes on: for a command, a pipeline and a blocking command.
func TestClassifyGoexitGivesTheSlotBack(t *testing.T) {
	s := startRedis(t)
	g, _ := testGroup(t)
	c := s.plain(t)
	h := fuseredis.New(g, s.addr())
	h.Classify = func(error) error { runtime.Goexit(); return nil }
	c.AddHook(h)
	ctx := context.Background()
	require.NoError(t, c.Ping(ctx).Err()) // no error: Classify does not run
	calls := []struct {
		name string
		run  func()
	}{ // each ends in redis.Nil, which Classify sees
		{"a command", func() { c.Get(ctx, "missing") }},
		{"a pipeline", func() {
			_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error { p.Get(ctx, "missing"); return nil })
		}},
		{"a blocking command", func() { c.BLPop(ctx, 10*time.Millisecond, "empty") }},
	}
	for _, call := range calls {
		before := stats(t, g, s.addr())
		returned := false
		done := make(chan struct{})
		go func() {
			defer close(done)
			call.run()
			returned = true
		}()
		<-done
		assert.False(t, returned, "%s: the Goexit went on", call.name)
		after := stats(t, g, s.addr())
		assert.Zero(t, after.InUse, "%s: the slot is given back", call.name)
		assert.Equal(t, before.Failures+1, after.Failures, "%s: counted as a failure", call.name)
	}
	assert.EqualValues(t, 2, stats(t, g, s.addr()).Panics, "the command and the pipeline each a panic")
}

// TestDialClassifyGoexitEndsThePermit points a client at a closed port,
// with a Hook.Classify that ends its goroutine (runtime.Goexit), and
// subscribes. The dials outside commands (the subscription's; a pool's
// refills for MinIdleConns likewise) are recorded each on a breaker
// permit of its own, and that permit is ended all the same, a failure
// recorded as a *breaker.PanicError naming Classify; go-redis's goroutine
// is not cut short, so the subscriber gets the dial's error. (A failed
// dial is no call of the executor's and counts as no panic.)
func TestDialClassifyGoexitEndsThePermit(t *testing.T) {
	var mu sync.Mutex
	var classified []error
	g, recorded := recordingGroup(t)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t)) // nothing listens
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second,
		ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 8})
	t.Cleanup(func() { _ = c.Close() })
	h := fuseredis.New(g, addr)
	h.Classify = func(err error) error {
		mu.Lock()
		classified = append(classified, err)
		mu.Unlock()
		runtime.Goexit()
		return nil
	}
	c.AddHook(h)

	// Bounded: a subscriber left waiting for a dial whose goroutine ended
	// would wait for ever without a deadline of its own.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ps := c.Subscribe(ctx, "news") // dials outside any command
	_, err := ps.Receive(ctx)
	assert.ErrorContains(t, err, "connection refused", "the dial's error, not the deadline's")
	require.NoError(t, ps.Close())
	eventually(t, 10*time.Second, "a failed dial recorded", func() bool {
		return stats(t, g, addr).Failures > 0
	})
	st := stats(t, g, addr)
	assert.Zero(t, st.InUse)
	assert.Zero(t, st.Panics, "no call of the executor's")
	mu.Lock()
	defer mu.Unlock()
	for _, err := range recorded() {
		var pe *breaker.PanicError
		if assert.ErrorAs(t, err, &pe) {
			assert.Equal(t, "fuseredis.Hook.Classify", pe.Callback)
		}
	}
	for _, err := range classified {
		assert.ErrorContains(t, err, "connection refused", "every dial ran to its end, and the subscriber got its error")
	}
}

// TestInvocationTimeoutIsErrTimeout stops the node (SIGSTOP) past the
// invocation timeout: a command and a pipeline it ends return an error matching
// executor.ErrTimeout that keeps go-redis's own (the socket's i/o
// timeout) in its chain, on every command of the pipeline too. A deadline
// of the caller's own, earlier, stays the caller's, and replies such as
// redis.Nil stay as they are.
func TestInvocationTimeoutIsErrTimeout(t *testing.T) {
	t.Parallel()
	s := startRedis(t)
	g, _ := testGroup(t, func(c *executor.Config) {
		c.InvocationTimeout = 300 * time.Millisecond
		c.Breaker.ConsecutiveFailures = 100
	})
	c := s.hooked(t, g) // ReadTimeout 2 s: the invocation deadline comes first
	ctx := context.Background()
	require.Equal(t, redis.Nil, c.Get(ctx, "missing").Err(), "an answer is the command's own, comparable with ==")

	s.freeze()
	defer s.thaw()
	err := c.Get(ctx, "k").Err()
	assert.ErrorIs(t, err, executor.ErrTimeout, "a command")
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "go-redis's i/o timeout stays in the chain")

	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "k")
		p.Incr(ctx, "n")
		return nil
	})
	assert.ErrorIs(t, err, executor.ErrTimeout, "a pipeline")
	require.Len(t, cmds, 2)
	for _, cmd := range cmds {
		assert.ErrorIs(t, cmd.Err(), executor.ErrTimeout, "a command of the pipeline: %v", cmd.Args())
		assert.ErrorIs(t, cmd.Err(), os.ErrDeadlineExceeded)
	}

	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	err = c.Get(short, "k").Err()
	require.Error(t, err)
	assert.NotErrorIs(t, err, executor.ErrTimeout, "the caller's own deadline: %v", err)
}

// TestBlockingCommandEndedByItsCallerIsIgnored: a queue consumer waits on
// a healthy node with BLPOP 0 under its own deadline, again and again. A
// blocking command waits by design, for as long as its caller lets it: its
// caller's deadline (go-redis's i/o timeout at that deadline) says nothing
// of the node, and is ignored, so the breaker never opens.
func TestBlockingCommandEndedByItsCallerIsIgnored(t *testing.T) {
	t.Parallel()
	s := startRedis(t)
	g, rec := testGroup(t)
	c := s.hooked(t, g)
	require.NoError(t, c.Ping(context.Background()).Err())
	before := stats(t, g, s.addr())
	for range 6 { // more than the five in a row that trip the breaker
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := c.BLPop(ctx, 0, "queue").Err()
		cancel()
		require.Error(t, err, "nothing came")
		assert.NotErrorIs(t, err, executor.ErrTimeout, "no invocation timeout bounds a blocking command")
	}
	after := stats(t, g, s.addr())
	assert.Equal(t, before.Failures, after.Failures, "got %d failures, want %d", after.Failures, before.Failures)
	assert.Equal(t, before.Ignored+6, after.Ignored)
	assert.Empty(t, transitionsOf(rec.Events(), s.addr()), "the breaker never moved")
	require.NoError(t, c.Set(context.Background(), "k", "v", 0).Err())
}
