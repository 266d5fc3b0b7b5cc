package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
	"github.com/fusebox-go/fusebox/fuseboxtest"
)

// The supplier every replica protects in these tests: 2 slots, calls of at
// most 200 ms, a 600 ms reset timeout. The probe lease lasts 200 ms + 2 ×
// 100 ms = 400 ms (the default margin).
const (
	invocation = 200 * time.Millisecond
	reset      = 600 * time.Millisecond
	margin     = 100 * time.Millisecond
)

var testLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// The link's timing in these tests. They run in real time on a loaded,
// shared machine, where a goroutine may wait for a CPU for a hundred
// milliseconds: a Redis command gets a second (opTimeout) and a quiet
// subscription is down after 2 × healthCheck, so that load alone does not
// take a link down. noWait bounds every Submit: one that waited for the
// network while Redis hangs would wait the opTimeout of a command.
const (
	opTimeout   = time.Second
	healthCheck = 500 * time.Millisecond
	noWait      = opTimeout / 4
)

func groupConfig() executor.GroupConfig {
	return executor.GroupConfig{Default: executor.Config{
		Slots: 2, InvocationTimeout: invocation,
		Breaker: breaker.Config{ResetTimeout: reset, ConsecutiveFailures: 1},
	}}
}

// replica is one replica of the service: a linked Group, in this process;
// rec hears its transitions.
type replica struct {
	name string
	link *fleet.Link
	rec  fuseboxtest.Recorder
}

func (r *replica) payments(t *testing.T) *executor.Executor {
	ex, err := r.link.Group().Executor("payments")
	require.NoError(t, err)
	return ex
}

func (r *replica) state(t *testing.T) breaker.Stats { return r.payments(t).Breaker().Stats() }

// madeBeforeOpen waits until no call admitted before the replicas opened
// still holds a slot (an admitted call reaches the supplier when its
// goroutine runs, which on a loaded machine can be after its breaker
// opened), and returns how many calls the supplier has seen: those are
// no probes.
func madeBeforeOpen(t *testing.T, rs []*replica, s *supplier) int {
	t.Helper()
	eventually(t, patience, "the calls admitted before the trip end", func() bool {
		for _, r := range rs {
			if r.payments(t).Stats().InUse != 0 {
				return false
			}
		}
		return true
	})
	return len(s.made())
}

// firstEvent waits for the replica's first transition event: a listener
// is told after the state has changed, so a state seen open does not mean
// its event has been recorded yet. It is the first wait on r.rec.
func (r *replica) firstEvent(t *testing.T) breaker.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := r.rec.WaitFor(ctx, func(breaker.Event) bool { return true })
	require.NoError(t, err, r.name+"'s first event")
	return e
}

// supplier counts the calls (probes, in an outage) that reach it, and who
// made them.
type supplier struct {
	mu      sync.Mutex
	healthy bool
	hang    bool
	calls   []probe
}

type probe struct {
	replica string
	at      time.Time
}

func (s *supplier) call(replica string) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		s.mu.Lock()
		s.calls = append(s.calls, probe{replica, time.Now()})
		healthy, hang := s.healthy, s.hang
		s.mu.Unlock()
		if hang {
			<-ctx.Done()
			return 0, ctx.Err()
		}
		if healthy {
			return 1, nil
		}
		return 0, errors.New("supplier down")
	}
}

func (s *supplier) made() []probe {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]probe(nil), s.calls...)
}

func (s *supplier) set(healthy, hang bool) {
	s.mu.Lock()
	s.healthy, s.hang = healthy, hang
	s.mu.Unlock()
}

// linkConfig is the link of a test replica; srv nil leaves Client to the
// caller.
func linkConfig(srv *server, t *testing.T, name string) fleet.Config {
	var c redis.UniversalClient
	if srv != nil {
		c = srv.client(t)
	}
	return fleet.Config{
		Client: c, Prefix: "shop", Replica: name, Margin: margin,
		OpTimeout: opTimeout, HealthCheck: healthCheck,
		BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		Logger: testLogger,
	}
}

// startFleet starts n replicas linked through srv and waits until every
// link is up and every replica has a payments executor.
func startFleet(t *testing.T, srv *server, n int) []*replica {
	t.Helper()
	rs := make([]*replica, n)
	for i := range rs {
		rs[i] = startReplica(t, srv, fmt.Sprintf("r%d", i))
	}
	return rs
}

func startReplica(t *testing.T, srv *server, name string) *replica {
	t.Helper()
	return startReplicaWith(t, srv.client(t), name)
}

// traffic submits a payment call on every replica every 5 ms until stop,
// and records how long each Submit took.
func traffic(t *testing.T, rs []*replica, s *supplier) (stop func() time.Duration) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	var slowest atomic.Int64
	for _, r := range rs {
		ex := r.payments(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				start := time.Now()
				f, err := executor.Submit(context.Background(), ex, s.call(r.name))
				if d := int64(time.Since(start)); d > slowest.Load() {
					slowest.Store(d)
				}
				if err == nil {
					_, _ = f.Await(context.Background())
				}
			}
		}()
	}
	return func() time.Duration {
		close(done)
		wg.Wait()
		return time.Duration(slowest.Load())
	}
}

func TestTripReachesTheFleet(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 4)

	rs[0].payments(t).Breaker().Trip(breaker.Saturation)
	require.Equal(t, breaker.Open, rs[0].state(t).State)
	opened := rs[0].firstEvent(t)
	for _, r := range rs[1:] {
		eventually(t, patience, r.name+" opens", func() bool { return r.state(t).State == breaker.Open })
		s := r.state(t)
		assert.Equal(t, breaker.Remote, s.Reason)
		e := r.firstEvent(t)
		assert.Equal(t, breaker.Remote, e.Reason)
		// Both events carry the monotonic time of the transition.
		took := e.Time.Sub(opened.Time)
		// Sub-millisecond on an idle machine; bounded here by what a
		// loaded one can delay a goroutine, far below a reset period.
		assert.Less(t, took, noWait, "%s: the trip took %v to arrive", r.name, took)
		t.Logf("%s opened %v after the trip", r.name, took)
		// The event has the fleet's probe time; the breaker itself is held
		// past it until this replica has contended for the probe lease.
		// The error of the translated probe time is the message's one-way
		// latency, at most the time it took to arrive.
		assert.WithinDuration(t, opened.OpenUntil, e.OpenUntil, took+time.Millisecond, "the same probe time")
		assert.False(t, s.OpenUntil.Before(e.OpenUntil))
		_, err := executor.Submit(context.Background(), r.payments(t), func(context.Context) (int, error) { return 0, nil })
		assert.ErrorIs(t, err, breaker.ErrOpen, "%s refuses before its own slots fill", r.name)
	}
	// Both counts follow the events they count.
	eventually(t, patience, "published once", func() bool { return rs[0].link.Stats().Published == 1 })
	eventually(t, patience, "applied once", func() bool { return rs[1].link.Stats().Applied == 1 })
}

func TestOneProbePerResetPeriod(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 4)
	s := &supplier{}
	stop := traffic(t, rs, s)
	rs[0].payments(t).Breaker().Trip(breaker.Saturation)
	tripped := time.Now()
	for _, r := range rs {
		eventually(t, patience, r.name+" opens", func() bool { return r.state(t).State == breaker.Open })
	}
	// Calls made before the trip reached a replica were no probes.
	before := madeBeforeOpen(t, rs, s)

	// Four reset periods of a failing supplier: every probe fails.
	<-time.After(4*reset + reset/2)
	probes := s.made()[before:]
	s.set(true, false)
	// The next probe succeeds and the whole fleet closes.
	for _, r := range rs {
		eventually(t, patience, r.name+" closes", func() bool { return r.state(t).State == breaker.Closed })
	}
	slowest := stop()

	for _, p := range probes {
		t.Logf("probe by %s at +%v", p.replica, p.at.Sub(tripped))
	}
	require.GreaterOrEqual(t, len(probes), 3, "the fleet keeps probing")
	assert.LessOrEqual(t, len(probes), 4)
	for i, p := range probes {
		prev := tripped
		if i > 0 {
			prev = probes[i-1].at
		}
		assert.GreaterOrEqual(t, p.at.Sub(prev), reset-margin, "probe %d came %v after the last one", i, p.at.Sub(prev))
	}
	assert.Less(t, slowest, noWait, "no Submit waits for the network")
	won := uint64(0)
	for _, r := range rs {
		won += r.link.Stats().LeasesWon
	}
	assert.GreaterOrEqual(t, won, uint64(len(probes)))
	for _, r := range rs {
		st := r.state(t)
		if st.Reason == breaker.Remote {
			assert.Equal(t, breaker.Closed, st.State)
		}
	}
	if t.Failed() {
		for _, r := range rs {
			t.Logf("%s: %+v", r.name, r.link.Stats())
			for _, e := range r.rec.Events() {
				t.Logf("%s: +%v %v", r.name, e.Time.Sub(tripped), e)
			}
		}
	}
}

func TestLeaseExpiresWhenTheHolderDies(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 3)
	s := &supplier{}
	s.set(false, true) // hung: a probe runs its full 200 ms
	stop := traffic(t, rs, s)
	defer stop()
	rs[0].payments(t).Breaker().Trip(breaker.Saturation)
	for _, r := range rs {
		eventually(t, patience, r.name+" opens", func() bool { return r.state(t).State == breaker.Open })
	}
	// Calls admitted before the trip reached a replica are no probes; the
	// slots they hold are free again by the time the probe is due.
	before := madeBeforeOpen(t, rs, s)

	first := waitForProbe(t, s, before, 2*reset)
	holder := replicaNamed(rs, first.replica)
	// The holder dies mid-probe: its link goes silent (no verdict, no
	// renewal) while its probe is still running.
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = holder.link.Close(ctx)
	}()
	second := waitForProbe(t, s, before+1, patience)
	<-killed
	assert.NotEqual(t, first.replica, second.replica, "another replica probes")
	lease := invocation + 2*margin
	gap := second.at.Sub(first.at)
	assert.GreaterOrEqual(t, gap, lease-margin, "not before the lease expired")
	assert.Less(t, gap, reset+2*lease, "soon after it expired")
	t.Logf("holder %s probed at +0, %s took over at +%v", first.replica, second.replica, gap)
}

func waitForProbe(t *testing.T, s *supplier, i int, limit time.Duration) probe {
	t.Helper()
	eventually(t, limit, fmt.Sprintf("probe %d", i), func() bool { return len(s.made()) > i })
	return s.made()[i]
}

func replicaNamed(rs []*replica, name string) *replica {
	for _, r := range rs {
		if r.name == name {
			return r
		}
	}
	return nil
}

func TestRedisDownAndBack(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 3)
	s := &supplier{}
	stop := traffic(t, rs, s)
	rs[0].payments(t).Breaker().Trip(breaker.Saturation)
	for _, r := range rs {
		eventually(t, patience, r.name+" opens", func() bool { return r.state(t).State == breaker.Open })
	}

	// Redis goes away mid-outage.
	srv.stop()
	for _, r := range rs {
		eventually(t, patience, r.name+" link down", func() bool { return !r.link.Stats().Up })
	}
	before := madeBeforeOpen(t, rs, s)
	// Every replica goes on protecting itself: each probes on its own
	// (no lease to share), fails, and re-opens.
	eventually(t, patience, "every replica probes on its own", func() bool {
		seen := map[string]bool{}
		for _, p := range s.made()[before:] {
			seen[p.replica] = true
		}
		return len(seen) == len(rs)
	})
	for _, r := range rs {
		st := r.link.Stats()
		assert.False(t, st.Up)
		assert.NotEmpty(t, st.LastError)
		assert.GreaterOrEqual(t, st.Downs, uint64(1))
		assert.NotEqual(t, breaker.Closed, r.state(t).State, "%s still protects itself", r.name)
	}

	// Redis comes back, empty: the replicas reconnect, write their open
	// breakers again, and a replica that starts now learns them.
	srv.start()
	for _, r := range rs {
		eventually(t, patience, r.name+" link up again", func() bool { return r.link.Stats().Up })
		assert.GreaterOrEqual(t, r.link.Stats().Sessions, uint64(2))
	}
	late := startReplica(t, srv, "late")
	eventually(t, reset, "the late replica learns the open breaker", func() bool {
		st := late.state(t)
		return st.State == breaker.Open && st.Reason == breaker.Remote
	})
	slowest := stop()
	assert.Less(t, slowest, noWait, "no Submit waited for the network while Redis was down")
}

// Config.OpTimeout bounds each command of the link, on a client whose own
// timeouts bound nothing (ReadTimeout and WriteTimeout -1): with
// ContextTimeoutEnabled, which New asks for, go-redis honours the link's
// deadline on the socket. A fleet-wide action on a frozen Redis returns
// its error while Redis is still frozen.
func TestOpTimeoutBoundsACommandOnAHungRedis(t *testing.T) {
	srv := startRedis(t)
	cfg := linkConfig(srv, t, "r0")
	cfg.Client = srv.client(t, func(o *redis.Options) {
		o.ReadTimeout, o.WriteTimeout, o.ContextTimeoutEnabled = -1, -1, true
	})
	cfg.OpTimeout = 100 * time.Millisecond
	cfg.HealthCheck = 5 * time.Second // the link stays up while Redis is frozen
	l, err := fleet.New(cfg, groupConfig())
	require.NoError(t, err)
	t.Cleanup(func() {
		srv.thaw()
		_ = l.Close(context.Background())
	})
	eventually(t, patience, "link up", func() bool { return l.Stats().Up })
	srv.freeze()
	done := make(chan error, 1)
	go func() { done <- l.ForceOpen(context.Background(), "payments", "INC-1") }()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "applied on this replica only")
	case <-time.After(10 * time.Second): // a hang: only the thaw ends it
		srv.thaw()
		<-done
		t.Fatal("ForceOpen waited for the frozen Redis: OpTimeout did not bound the command")
	}
}

func TestHungRedisNeverBlocksACall(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 2)
	s := &supplier{}
	s.set(false, true)
	srv.freeze() // accepts connections, answers nothing
	defer srv.thaw()
	stop := traffic(t, rs, s)
	// The hung supplier saturates each replica's 2 slots; each trips on
	// its own, while its link is stuck on Redis.
	for _, r := range rs {
		eventually(t, patience, r.name+" trips locally", func() bool { return r.state(t).State == breaker.Open })
	}
	for _, r := range rs {
		eventually(t, 3*opTimeout+4*healthCheck, r.name+" sees the link go silent", func() bool { return !r.link.Stats().Up })
	}
	slowest := stop()
	assert.Less(t, slowest, noWait, "Submit never waits for Redis")
	for _, r := range rs {
		assert.NotEqual(t, breaker.Remote, r.state(t).Reason, "its own evidence")
	}
	srv.thaw()
	for _, r := range rs {
		eventually(t, patience, r.name+" reconnects", func() bool { return r.link.Stats().Up })
	}
}

func TestAuth(t *testing.T) {
	srv := startRedis(t, "--requirepass", "s3cret")
	t.Run("the client's password opens the link", func(t *testing.T) {
		cfg := linkConfig(srv, t, "a")
		cfg.Client = srv.client(t, func(o *redisOptions) { o.Password = "s3cret" })
		l, err := fleet.New(cfg, groupConfig())
		require.NoError(t, err)
		defer l.Close(context.Background())
		eventually(t, patience, "link up", func() bool { return l.Stats().Up })
	})
	t.Run("a wrong password leaves the link down and the group protecting alone", func(t *testing.T) {
		cfg := linkConfig(srv, t, "b")
		cfg.Client = srv.client(t, func(o *redisOptions) { o.Password = "wrong" })
		l, err := fleet.New(cfg, groupConfig())
		require.NoError(t, err)
		defer l.Close(context.Background())
		eventually(t, patience, "an error is reported", func() bool { return l.Stats().LastError != "" })
		assert.False(t, l.Stats().Up)
		assert.Contains(t, l.Stats().LastError, "WRONGPASS")
		ex, err := l.Group().Executor("payments")
		require.NoError(t, err)
		ex.Breaker().Trip(breaker.Manual)
		_, err = executor.Submit(context.Background(), ex, func(context.Context) (int, error) { return 0, nil })
		assert.ErrorIs(t, err, breaker.ErrOpen)
	})
}

func TestMalformedMessagesAreDroppedAndCounted(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 1)
	raw := srv.client(t)
	bad := []string{
		`garbage`,
		`{"v":9,"replica":"x","supplier":"payments","kind":"open","reason":"","age_ns":0,"probe_in_ns":1}`,
		`{"v":1,"replica":"x","supplier":"payments","kind":"open","reason":"","age_ns":-5,"probe_in_ns":1}`,
		`{"v":1,"replica":"x","supplier":"","kind":"close","reason":"","age_ns":0}`,
		`{"v":1,"replica":"x","supplier":"payments","kind":"open","reason":"","age_ns":0,"probe_in_ns":1e400}`,
	}
	for _, p := range bad {
		require.NoError(t, raw.Publish(context.Background(), "{shop}:events", p).Err())
	}
	// A valid message after them is still applied: the link survived.
	good := `{"v":1,"replica":"x","supplier":"payments","kind":"open","reason":"manual","age_ns":0,"probe_in_ns":1000000000}`
	require.NoError(t, raw.Publish(context.Background(), "{shop}:events", good).Err())
	eventually(t, patience, "the valid message applies", func() bool { return rs[0].state(t).State == breaker.Open })
	// The applier counts the message after the breaker has opened.
	eventually(t, patience, "counted as applied", func() bool { return rs[0].link.Stats().Applied == 1 })
	st := rs[0].link.Stats()
	assert.Equal(t, uint64(len(bad)), st.Malformed)
	assert.Equal(t, uint64(1), st.Applied)
	assert.True(t, st.Up)
}

// A key of the fleet's that holds another type (an operator's mistake,
// another program's key) is bad data, as a malformed message is: the
// catch-up counts it and reads the other keys, and the link comes up.
func TestKeysOfTheWrongTypeAreCountedAsMalformed(t *testing.T) {
	ctx := context.Background()
	t.Run("an open key and an override key", func(t *testing.T) {
		srv := startRedis(t)
		rs := startFleet(t, srv, 1)
		rs[0].payments(t).Breaker().Trip(breaker.Manual)
		require.NoError(t, rs[0].link.ForceOpen(ctx, "search", "INC-1"))
		eventually(t, patience, "the trip is published", func() bool { return rs[0].link.Stats().Published == 1 })
		raw := srv.client(t)
		require.NoError(t, raw.SAdd(ctx, "{shop}:open", "bad").Err())
		require.NoError(t, raw.HSet(ctx, "{shop}:open:bad", "f", "v").Err())
		require.NoError(t, raw.SAdd(ctx, "{shop}:overrides", "bad").Err())
		require.NoError(t, raw.Set(ctx, "{shop}:override:bad", "v", 0).Err())
		late := startReplica(t, srv, "late") // waits until its link is up
		st := late.link.Stats()
		assert.Equal(t, 2*st.Sessions, st.Malformed, "each catch-up counts the two bad keys")
		eventually(t, patience, "the open key applies", func() bool { return late.state(t).State == breaker.Open })
		eventually(t, patience, "the override is known", func() bool {
			return late.link.Overrides()["search"].Action == "force-open"
		})
	})
	t.Run("the sets that list them", func(t *testing.T) {
		srv := startRedis(t)
		raw := srv.client(t)
		require.NoError(t, raw.Set(ctx, "{shop}:open", "v", 0).Err())
		require.NoError(t, raw.Set(ctx, "{shop}:overrides", "v", 0).Err())
		r := startReplica(t, srv, "r0")
		st := r.link.Stats()
		assert.Equal(t, 2*st.Sessions, st.Malformed, "each catch-up counts the two bad keys")
	})
}

// A supplier made on first use may have a name the wire cannot carry (too
// long, a control character): every other replica would drop its trip as
// malformed. The trip stays on this replica, protecting it, and is counted
// in Stats.Unpublishable instead of being published.
func TestATripOfANameTheWireCannotCarryStaysLocal(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 2)
	// A name longer than MaxSupplierLen gets no executor of its own
	// (executor.MaxNameLen is the same bound), so a control character is
	// what is left to refuse.
	bad := []string{"pay\nments"}
	for _, name := range bad {
		ex, err := rs[0].link.Group().Executor(name)
		require.NoError(t, err)
		ex.Breaker().Trip(breaker.Manual)
	}
	// The publisher handles transitions in order: once the trip after
	// them reaches r1, theirs have been handled.
	rs[0].payments(t).Breaker().Trip(breaker.Manual)
	eventually(t, patience, "r1 opens", func() bool { return rs[1].state(t).State == breaker.Open })
	// r1 may hear the trip before r0's publisher has counted it.
	eventually(t, patience, "the payments trip counted", func() bool { return rs[0].link.Stats().Published >= 1 })
	st := rs[0].link.Stats()
	assert.Equal(t, uint64(len(bad)), st.Unpublishable)
	assert.Equal(t, uint64(1), st.Published, "only the payments trip")
	assert.Zero(t, rs[1].link.Stats().Malformed, "nothing the fleet refuses was sent")
	for _, name := range bad {
		ex, ok := rs[0].link.Group().Lookup(name)
		require.True(t, ok)
		assert.Equal(t, breaker.Open, ex.Breaker().State(), "the trip protects this replica")
	}
}

func TestPrefixesSeparateFleets(t *testing.T) {
	srv := startRedis(t)
	shop := startReplica(t, srv, "shop-1")
	cfg := linkConfig(srv, t, "other-1")
	cfg.Prefix = "other"
	other, err := fleet.New(cfg, groupConfig())
	require.NoError(t, err)
	defer other.Close(context.Background())
	eventually(t, patience, "link up", func() bool { return other.Stats().Up })
	ex, err := other.Group().Executor("payments")
	require.NoError(t, err)
	ex.Breaker().Trip(breaker.Manual)
	eventually(t, patience, "published", func() bool { return other.Stats().Published == 1 })
	shop.payments(t).Breaker().Trip(breaker.Manual) // a round trip on shop's own channel
	eventually(t, patience, "shop hears itself", func() bool { return shop.link.Stats().Own == 1 })
	assert.Zero(t, shop.link.Stats().Received, "another fleet's trip never reaches this one")
}

// A replica that starts during an outage learns it from the open key alone,
// with nobody publishing again meanwhile: whether its group lists the
// supplier (the executor exists before the key is read) or makes the
// executor on first use (after).
func TestALateReplicaLearnsFromTheKeyAlone(t *testing.T) {
	srv := startRedis(t)
	long := func() executor.GroupConfig {
		g := groupConfig()
		g.Default.Breaker.ResetTimeout = 5 * time.Second // the key outlives the test
		return g
	}
	link := func(name string, g executor.GroupConfig) *fleet.Link {
		l, err := fleet.New(linkConfig(srv, t, name), g)
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		eventually(t, patience, name+" link up", func() bool { return l.Stats().Up })
		return l
	}
	first := link("first", long())
	ex, err := first.Group().Executor("payments")
	require.NoError(t, err)
	ex.Breaker().Trip(breaker.Manual)
	eventually(t, patience, "published", func() bool { return first.Stats().Published == 1 })

	listed := long()
	listed.Suppliers = map[string]executor.Config{"payments": listed.Default}
	for _, tc := range []struct {
		name string
		g    executor.GroupConfig
	}{
		{"a group that lists the supplier", listed},
		{"a group that makes the executor on first use", long()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := link("late-"+strings.ReplaceAll(tc.name, " ", "-"), tc.g)
			ex, err := l.Group().Executor("payments")
			require.NoError(t, err)
			eventually(t, patience, "open", func() bool { return ex.Breaker().State() == breaker.Open })
			assert.Equal(t, breaker.Remote, ex.Breaker().Stats().Reason)
			// The applier counts the message after the breaker has opened.
			eventually(t, patience, "counted as applied", func() bool { return l.Stats().Applied == 1 })
		})
	}
	assert.Equal(t, uint64(1), first.Stats().Published, "nobody published again")
}
