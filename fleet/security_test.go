package fleet_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
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

// Hostile traffic on the fleet's Redis: what a client that can PUBLISH
// (and, where said, write keys) but holds no key can do to the replicas.

// startConfigured starts a replica with the test's group, its link
// configured by cfg and g (nil: unchanged).
func startConfigured(t *testing.T, srv *server, name string, cfg func(*fleet.Config), g func(*executor.GroupConfig)) *replica {
	t.Helper()
	r := &replica{name: name}
	gc := groupConfig()
	if g != nil {
		g(&gc)
	}
	lc := linkConfig(srv, t, name)
	if cfg != nil {
		cfg(&lc)
	}
	l, err := fleet.New(lc, gc)
	require.NoError(t, err)
	r.link = l
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = l.Close(ctx)
	})
	eventually(t, 20*time.Second, name+" link up", func() bool { return l.Stats().Up })
	return r
}

func action(kind, supplier string, seq int64) string {
	return fmt.Sprintf(`{"v":1,"replica":"x","supplier":%q,"kind":%q,"reason":"forged","age_ns":0,"seq":%d}`, supplier, kind, seq)
}

func trip(supplier, replica string) string {
	return fmt.Sprintf(`{"v":1,"replica":%q,"supplier":%q,"kind":"open","reason":"manual","age_ns":0,"probe_in_ns":500000000}`, replica, supplier)
}

func publish(t *testing.T, raw *redis.Client, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		require.NoError(t, raw.Publish(context.Background(), "{shop}:events", m).Err())
	}
}

// Finding 1: one forged force-open numbered MaxInt64 forced payments open
// for good, had every Reset ignored as stale, and came back from an honest
// replica's write-back as a float that broke the counter for every action.
func TestAForgedActionAboveTheCounterIsRefused(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 2)
	raw := srv.client(t)
	ctx := context.Background()
	publish(t, raw, action("force-open", "payments", 1<<63-1), action("force-open", "payments", 999_999_999_999_999))
	eventually(t, patience, "both are refused", func() bool {
		for _, r := range rs {
			if st := r.link.Stats(); st.Malformed != 1 || st.Refused != 1 {
				return false
			}
		}
		return true
	})
	for _, r := range rs {
		assert.Equal(t, breaker.Closed, r.state(t).State, r.name)
		assert.Empty(t, r.link.Overrides(), r.name)
	}
	// The operator's actions are applied everywhere.
	require.NoError(t, rs[0].link.ForceOpen(ctx, "payments", "INC-1"))
	everyReplica(t, rs, breaker.ForcedOpen, "force-open", "INC-1")
	require.NoError(t, rs[1].link.Reset(ctx, "payments", "INC-1 fixed"))
	everyReplica(t, rs, breaker.Closed, "reset", "INC-1 fixed")
	// Redis restarts empty: the replicas write back what they know, and
	// the counter stays an integer that INCR takes.
	srv.stop()
	srv.start()
	for _, r := range rs {
		eventually(t, patience, r.name+" up again", func() bool { return r.link.Stats().Up && r.link.Stats().Sessions >= 2 })
	}
	eventually(t, patience, "the actions are written back", func() bool {
		return raw.Exists(ctx, "{shop}:override:payments").Val() == 1
	})
	v, err := raw.Get(ctx, "{shop}:seq").Result()
	require.NoError(t, err)
	n, err := strconv.ParseInt(v, 10, 64)
	require.NoError(t, err, "the counter holds %q", v)
	assert.Equal(t, int64(2), n)
	require.NoError(t, raw.Incr(ctx, "{shop}:seq").Err())
	late := startReplica(t, srv, "late")
	everyReplica(t, []*replica{late}, breaker.Closed, "reset", "INC-1 fixed")
}

// A counter that does not hold an integer (written by something other
// than the fleet) is reported by name, and never replaced by a float.
func TestACorruptCounterIsNamedInTheError(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 1)
	raw := srv.client(t)
	ctx := context.Background()
	require.NoError(t, raw.Set(ctx, "{shop}:seq", "9.2233720368547758e+18", 0).Err())
	err := rs[0].link.ForceOpen(ctx, "payments", "INC-2")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "{shop}:seq")
	assert.Equal(t, breaker.ForcedOpen, rs[0].state(t).State, "applied on this replica")
	require.NoError(t, raw.Del(ctx, "{shop}:seq").Err())
	require.NoError(t, rs[0].link.Reset(ctx, "payments", "INC-2 fixed"))
	assert.Equal(t, "1", raw.Get(ctx, "{shop}:seq").Val())
}

// Finding 5: forged actions for suppliers without an executor were all
// kept: 20,000 left 16,031 entries and a scheduler rescanning them every
// 10 ms. They are bounded by Buffer, and a Strict group stores none.
func TestForgedActionsForUnknownSuppliersAreBounded(t *testing.T) {
	const forged = 2000
	for _, tc := range []struct {
		name   string
		strict bool
		most   int
	}{
		{"a group keeps at most Buffer", false, 64},
		{"a strict group keeps none", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startRedis(t)
			raw := srv.client(t)
			ctx := context.Background()
			// The counter vouches for them: the attacker numbered them
			// below it.
			require.NoError(t, raw.Set(ctx, "{shop}:seq", forged+1, 0).Err())
			r := startConfigured(t, srv, "r0", func(c *fleet.Config) { c.Buffer = 64 }, func(g *executor.GroupConfig) {
				if tc.strict {
					g.Strict, g.Suppliers = true, map[string]executor.Config{"payments": {}}
				}
			})
			for i := range forged {
				publish(t, raw, action("force-open", fmt.Sprintf("s%05d", i), int64(i+1)))
			}
			eventually(t, 10*time.Second, "every message is handled", func() bool {
				st := r.link.Stats()
				return st.Received+st.Overflow >= forged && st.Applied+st.Stale+st.Deferred+st.Overflow >= forged
			})
			assert.LessOrEqual(t, len(r.link.Overrides()), tc.most)
		})
	}
}

// Finding 6: with about 9,000 open breakers the link never came back: the
// catch-up read each open key in a round trip of its own within one
// OpTimeout. 10,000 open suppliers reconnect, and a replica that joins
// applies them, through a proxy that adds 300 µs to each round trip (a
// network between the replicas and Redis).
func TestTenThousandOpenSuppliersReconnect(t *testing.T) {
	const n = 10_000
	srv := startRedis(t)
	via := startSlowProxy(t, srv.addr(), 300*time.Microsecond)
	names := make([]string, n)
	deps := map[string]executor.Config{}
	// A long reset timeout: no probe round starts during the test.
	slow := executor.Config{Slots: 2, InvocationTimeout: invocation,
		Breaker: breaker.Config{ResetTimeout: time.Minute, ConsecutiveFailures: 1}}
	for i := range names {
		names[i] = fmt.Sprintf("s%05d", i)
		deps[names[i]] = slow
	}
	withDeps := func(g *executor.GroupConfig) { g.Suppliers = deps }
	defaultOp := func(c *fleet.Config) {
		c.Client = srv.client(t, func(o *redis.Options) { o.Addr, o.ContextTimeoutEnabled = via.addr(), true })
		c.OpTimeout, c.Buffer = fleet.DefaultOpTimeout, 1024
	}
	a := startConfigured(t, srv, "a", defaultOp, withDeps)
	for _, name := range names {
		ex, ok := a.link.Group().Lookup(name)
		require.True(t, ok)
		ex.Breaker().Trip(breaker.Manual)
	}
	raw := srv.client(t)
	ctx := context.Background()
	srv.stop()
	eventually(t, patience, "a is down", func() bool { return !a.link.Stats().Up })
	srv.start()
	took := eventually(t, 30*time.Second, "a is up again", func() bool { return a.link.Stats().Up })
	t.Logf("a reconnected with %d open suppliers %v after Redis was back", n, took)
	// Its catch-up never ran out of time (the reconnection's earlier
	// errors are those of a Redis that is not back yet).
	assert.NotContains(t, a.link.Stats().LastError, "deadline exceeded")
	// The link is up once it can publish; its pipelines of own open
	// breakers may still be on the way (9,659 of 10,000 were written when
	// one run looked at once).
	eventually(t, 30*time.Second, "a wrote every open breaker again", func() bool {
		return raw.SCard(ctx, "{shop}:open").Val() == int64(n)
	})

	start := time.Now()
	b := startConfigured(t, srv, "b", defaultOp, withDeps)
	t.Logf("b came up, reading %d open keys, in %v", n, time.Since(start))
	eventually(t, 10*time.Second, "b applied every open key", func() bool { return b.link.Stats().Applied >= n })
	for _, name := range names {
		ex, _ := b.link.Group().Lookup(name)
		require.Equal(t, breaker.Open, ex.Breaker().State(), name)
	}
	assert.Zero(t, b.link.Stats().Overflow)
}

// Finding 7: one forged open opened every replica despite a quorum of
// three, since only senders counted votes. Receivers count distinct
// senders themselves.
func TestAForgedOpenDoesNotOvercomeAQuorum(t *testing.T) {
	srv := startRedis(t)
	rs := startQuorumFleet(t, srv, 3, fleet.Quorum{Replicas: 3, Window: 5 * time.Second})
	raw := srv.client(t)
	publish(t, raw, trip("payments", "x"))
	for _, r := range rs {
		eventually(t, patience, r.name+" holds it back", func() bool { return r.link.Stats().Awaiting == 1 })
		assert.Equal(t, breaker.Closed, r.state(t).State)
	}
	// Three distinct replicas within the window make the quorum.
	publish(t, raw, trip("payments", "y"), trip("payments", "z"))
	for _, r := range rs {
		eventually(t, patience, r.name+" opens", func() bool { return r.state(t).State == breaker.Open })
	}
}

// Finding 7: a forged close closed a breaker that had tripped on the
// replica's own evidence. Its own probe decides.
func TestAForgedCloseDoesNotEndAnOwnTrip(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 1)
	raw := srv.client(t)
	rs[0].payments(t).Breaker().Trip(breaker.Saturation)
	publish(t, raw, `{"v":1,"replica":"x","supplier":"payments","kind":"close","reason":"probes-succeeded","age_ns":0}`)
	eventually(t, patience, "the close is set aside", func() bool { return rs[0].link.Stats().Stale == 1 })
	assert.Equal(t, breaker.Open, rs[0].state(t).State)
	assert.Equal(t, breaker.Saturation, rs[0].state(t).Reason)
}

// Finding 7: nothing limited remote trips. Beyond the burst, they wait
// for the rate.
func TestRemoteTripsAreRateLimited(t *testing.T) {
	srv := startRedis(t)
	r := startConfigured(t, srv, "r0", func(c *fleet.Config) { c.TripBurst, c.TripRate = 5, 0.01 }, nil)
	raw := srv.client(t)
	for i := range 10 {
		_, err := r.link.Group().Executor(fmt.Sprintf("s%d", i))
		require.NoError(t, err)
	}
	for i := range 10 {
		publish(t, raw, trip(fmt.Sprintf("s%d", i), "x"))
	}
	eventually(t, patience, "every trip is handled", func() bool { st := r.link.Stats(); return st.Applied+st.Limited == 10 })
	st := r.link.Stats()
	assert.Equal(t, uint64(5), st.Applied)
	assert.Equal(t, uint64(5), st.Limited)
}

// frame signs body with key as a replica of the fleet "shop" does.
func frame(key []byte, body string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("{shop}\n" + body))
	return "fb1." + base64.RawURLEncoding.EncodeToString(h.Sum(nil)) + "." + body
}

// With keys, unsigned and badly signed messages are dropped and counted;
// during a rotation two keys are accepted.
func TestASharedKeyDropsUnsignedMessages(t *testing.T) {
	srv := startRedis(t)
	k1, k2, k3 := []byte("0123456789abcdef-one"), []byte("0123456789abcdef-two"), []byte("0123456789abcdef-three")
	k4 := []byte("0123456789abcdef-nobody's")
	keys := func(ks ...[]byte) func(*fleet.Config) { return func(c *fleet.Config) { c.Keys = ks } }
	r0 := startConfigured(t, srv, "r0", keys(k1, k2), nil) // signs with k1
	r1 := startConfigured(t, srv, "r1", keys(k2, k1), nil) // signs with k2
	other := startConfigured(t, srv, "other", keys(k3), nil)
	raw := srv.client(t)
	publish(t, raw, trip("payments", "x"), frame(k4, trip("payments", "x")), "fb1."+frame(k1, trip("payments", "x"))[4:20])
	eventually(t, patience, "r0 drops all three", func() bool { return r0.link.Stats().Unsigned == 3 })
	eventually(t, patience, "r1 drops all three", func() bool { return r1.link.Stats().Unsigned == 3 })
	assert.Equal(t, breaker.Closed, r0.payments(t).Breaker().State())

	r0.payments(t).Breaker().Trip(breaker.Manual)
	eventually(t, patience, "r1 accepts r0's key", func() bool { return r1.state(t).State == breaker.Open })
	publish(t, raw, frame(k2, trip("search", "x")))
	eventually(t, patience, "r0 accepts r1's key", func() bool {
		ex, ok := r0.link.Group().Lookup("search")
		return r0.link.Stats().Deferred == 1 || (ok && ex.Breaker().State() == breaker.Open)
	})
	eventually(t, patience, "the third key accepts neither", func() bool { return other.link.Stats().Unsigned >= 5 })
	assert.Equal(t, breaker.Closed, other.payments(t).Breaker().State())
}

// reads is a go-redis hook that counts the GETs of keys starting with
// prefix.
type reads struct {
	prefix string
	n      atomic.Int64
}

func (w *reads) DialHook(next redis.DialHook) redis.DialHook { return next }
func (w *reads) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		w.count(c)
		return next(ctx, c)
	}
}

func (w *reads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			w.count(c)
		}
		return next(ctx, cmds)
	}
}

func (w *reads) count(c redis.Cmder) {
	if args := c.Args(); c.Name() == "get" && len(args) > 1 && strings.HasPrefix(fmt.Sprint(args[1]), w.prefix) {
		w.n.Add(1)
	}
}

// A replica asks Redis for the counter only for an action numbered above
// the counter it last read: a burst of actions costs one read.
func TestABurstOfActionsCostsOneCounterRead(t *testing.T) {
	srv := startRedis(t)
	raw := srv.client(t)
	ctx := context.Background()
	require.NoError(t, raw.Set(ctx, "{shop}:seq", 100, 0).Err())
	seqReads := &reads{prefix: "{shop}:seq"}
	c := srv.client(t)
	c.AddHook(seqReads)
	r := startConfigured(t, srv, "r0", func(cfg *fleet.Config) { cfg.Client = c }, nil)
	before := seqReads.n.Load()
	for i := range 20 {
		publish(t, raw, action("disable", fmt.Sprintf("s%d", i), int64(i+1)))
	}
	eventually(t, patience, "every action is known", func() bool { return len(r.link.Overrides()) == 20 })
	assert.Equal(t, int64(1), seqReads.n.Load()-before)
}

// The set that lists the open keys can be filled by anything that writes
// to Redis. A catch-up reads the keys of the suppliers this replica has an
// executor for, and of at most Buffer others: 5,000 names listed cost
// round trips of SSCAN, not 5,000 reads.
func TestACatchUpReadsOnlyTheKeysItCanUse(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 1)
	raw := srv.client(t)
	ctx := context.Background()
	junk := make([]any, 5000)
	for i := range junk {
		junk[i] = fmt.Sprintf("junk%05d", i)
	}
	require.NoError(t, raw.SAdd(ctx, "{shop}:open", junk...).Err())
	rs[0].payments(t).Breaker().Trip(breaker.Manual)
	eventually(t, patience, "the trip is published", func() bool { return rs[0].link.Stats().Published == 1 })
	openReads := &reads{prefix: "{shop}:open:"}
	c := srv.client(t)
	c.AddHook(openReads)
	late := startConfigured(t, srv, "late", func(cfg *fleet.Config) { cfg.Client, cfg.Buffer = c, 64 },
		func(g *executor.GroupConfig) {
			g.Suppliers = map[string]executor.Config{"payments": groupConfig().Default}
		})
	eventually(t, patience, "the late replica opens payments", func() bool { return late.state(t).State == breaker.Open })
	assert.LessOrEqual(t, openReads.n.Load(), int64(1+64), "payments and Buffer others")
}
