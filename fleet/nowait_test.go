package fleet_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
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
	"github.com/fusebox-go/fusebox/fleet"
)

// watch is a go-redis hook that sees every command of the links: it keeps
// those in flight, and the stack of any command sent from inside the
// breaker or the executor (a call's path: Allow, Submit, a transition
// listener run by a caller's transition).
type watch struct {
	seq   atomic.Int64
	total atomic.Int64

	mu       sync.Mutex
	inflight map[int64]sent // by command number
	onPath   []string       // stacks of commands sent from a call's path
}

// sent is a command in flight.
type sent struct {
	name string
	at   time.Time
}

func newWatch() *watch { return &watch{inflight: map[int64]sent{}} }

func (w *watch) DialHook(next redis.DialHook) redis.DialHook { return next }

func (w *watch) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		defer w.track(cmd.Name())()
		return next(ctx, cmd)
	}
}

func (w *watch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		defer w.track(fmt.Sprintf("pipeline of %d", len(cmds)))()
		return next(ctx, cmds)
	}
}

// track records a command from its start; the func it returns records its
// end.
func (w *watch) track(name string) func() {
	buf := make([]byte, 64<<10)
	stack := string(buf[:runtime.Stack(buf, false)])
	id := w.seq.Add(1)
	w.total.Add(1)
	w.mu.Lock()
	w.inflight[id] = sent{name, time.Now()}
	if strings.Contains(stack, "fusebox/breaker.") || strings.Contains(stack, "fusebox/executor.") {
		w.onPath = append(w.onPath, stack)
	}
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.inflight, id)
		w.mu.Unlock()
	}
}

// outstanding returns the commands in flight for at least d.
func (w *watch) outstanding(d time.Duration) map[int64]sent {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[int64]sent{}
	for id, c := range w.inflight {
		if time.Since(c.at) >= d {
			out[id] = c
		}
	}
	return out
}

func (w *watch) stacks() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.onPath...)
}

// No Submit waits on Redis, shown by events rather than by a time bound:
//
//  1. Structurally: no Redis command of the links is ever sent from a
//     goroutine inside the breaker or the executor (every command's stack
//     is looked at), through trips, remote opens, leases, probes and
//     closes with Redis up.
//  2. With Redis frozen (SIGSTOP: it accepts and answers nothing) and a
//     link's command to it outstanding, thousands of Submits, trips and
//     resets, and a first call that makes a new executor, all return
//     while that very command is still unanswered: no Submit depends on
//     Redis making progress. The transitions beyond the buffer are
//     dropped and counted, never waited for. And no goroutine ever
//     blocked (on a channel, a select, a lock: the runtime's block
//     profile records each such event) inside the link's code while the
//     breaker or the executor had called it: the link's part of a call
//     is a hand-off that never waits, for Redis or for anything else.
func TestNoSubmitWaitsOnRedis(t *testing.T) {
	srv := startRedis(t)
	w := newWatch()
	rs := make([]*replica, 2)
	for i := range rs {
		name := fmt.Sprintf("w%d", i)
		cfg := linkConfig(srv, t, name)
		// Commands to a frozen Redis stay outstanding for the whole test:
		// the client and the link give them 30 s.
		c := srv.client(t, func(o *redis.Options) { o.ReadTimeout, o.WriteTimeout = 30*time.Second, 30*time.Second })
		c.AddHook(w)
		cfg.Client, cfg.OpTimeout, cfg.HealthCheck, cfg.Buffer = c, 30*time.Second, 10*time.Second, 8
		l, err := fleet.New(cfg, groupConfig())
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		rs[i] = &replica{name: name, link: l}
		eventually(t, patience, name+" link up", func() bool { return l.Stats().Up })
		rs[i].payments(t)
	}

	// Redis up: a failing supplier trips w0, w1 opens from the fleet, the
	// replicas contend for the lease and probe; then the supplier
	// recovers and the fleet closes.
	rs[0].payments(t).Breaker().Trip(breaker.Saturation)
	eventually(t, patience, "w1 opens from the fleet", func() bool { return rs[1].state(t).Reason == breaker.Remote })
	s := &supplier{}
	stop := traffic(t, rs, s)
	eventually(t, patience, "a lease is won", func() bool { return rs[0].link.Stats().LeasesWon+rs[1].link.Stats().LeasesWon > 0 })
	s.set(true, false)
	for _, r := range rs {
		eventually(t, patience, r.name+" closes", func() bool { return r.state(t).State == breaker.Closed })
	}
	stop()
	require.Positive(t, w.total.Load())
	assert.Empty(t, w.stacks(), "a Redis command was sent from a call's path")

	// Redis frozen: a trip's announcement is sent and stays unanswered.
	// From here every blocking event of the process is recorded with its
	// stack (the runtime's block profile, at rate 1: every one).
	runtime.SetBlockProfileRate(1)
	defer runtime.SetBlockProfileRate(0)
	srv.freeze()
	defer srv.thaw()
	ex := rs[0].payments(t)
	ex.Breaker().Trip(breaker.Manual)
	// A command unanswered for 200 ms is stuck: Redis is stopped, and the
	// client gives it 30 s.
	var stuck map[int64]sent
	eventually(t, patience, "a command to the frozen Redis is outstanding", func() bool {
		stuck = w.outstanding(200 * time.Millisecond)
		return len(stuck) > 0
	})
	const calls = 2000
	for i := range calls {
		if i%20 == 0 { // a transition per 20 calls, far beyond the buffer of 8
			ex.Breaker().Reset()
			ex.Breaker().Trip(breaker.Manual)
		}
		if i%2 == 0 {
			ex.Breaker().Reset()
		}
		if f, err := executor.Submit(context.Background(), ex, func(context.Context) (int, error) { return 1, nil }); err == nil {
			_, _ = f.Await(context.Background())
		}
	}
	_, err := executor.DoIn(context.Background(), rs[1].link.Group(), "fresh", func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err, "a first call makes an executor without Redis")
	still := w.outstanding(0)
	held := 0
	for id := range stuck {
		if _, ok := still[id]; ok {
			held++
		}
	}
	assert.Positive(t, held, "every Submit returned while a command sent before them was still unanswered")
	assert.Positive(t, rs[0].link.Stats().Dropped, "the transitions beyond the buffer were dropped, not waited for")
	runtime.SetBlockProfileRate(0)
	assert.Empty(t, blockedInTheLinkOnACallPath(t), "a caller blocked inside the link")
	assert.Empty(t, w.stacks(), "a Redis command was sent from a call's path")
	t.Logf("%d Submits and %d transitions with %d commands outstanding on a frozen Redis; %d commands watched in all",
		calls, 2*calls/20+calls/2, len(still), w.total.Load())
	srv.thaw()
	for _, r := range rs {
		eventually(t, patience, r.name+" link up again", func() bool { return r.link.Stats().Up })
	}
}

// blockedInTheLinkOnACallPath returns the block profile's records whose
// stack has the fleet package's code called by the breaker's or the
// executor's (the link's transition listener, run by a caller's
// transition).
func blockedInTheLinkOnACallPath(t *testing.T) []string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, pprof.Lookup("block").WriteTo(&b, 1))
	var bad []string
	for _, rec := range strings.Split(b.String(), "\n\n") {
		fleetAt, callerAt := -1, -1
		for i, line := range strings.Split(rec, "\n") {
			switch {
			case !strings.HasPrefix(strings.TrimSpace(line), "#"):
			case strings.Contains(line, "fusebox/fleet.") && !strings.Contains(line, "fleet_test.") && fleetAt < 0:
				fleetAt = i
			case strings.Contains(line, "fusebox/breaker.") || strings.Contains(line, "fusebox/executor."):
				callerAt = i
			}
		}
		if fleetAt >= 0 && callerAt > fleetAt { // innermost first: the link called by the breaker or executor
			bad = append(bad, rec)
		}
	}
	return bad
}
