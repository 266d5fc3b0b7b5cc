package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// backend is where a fleet's shared state lives: Redis (redisBackend), or
// an in-process hub with a modelled latency that lets the fleet scenario
// run in virtual time (hub.go). The link's logic (rules, leases, holds) is
// the same over both.
type backend interface {
	// subscribe subscribes to the fleet's channel; the subscription is
	// confirmed when it returns.
	subscribe(ctx context.Context) (feed, error)
	// announce writes a supplier's open key, which expires after ttl, and
	// publishes msg.
	announce(ctx context.Context, name string, stored []byte, ttl time.Duration, msg []byte) error
	// withdraw replaces a supplier's open key by the close stored, which
	// expires after ttl, and publishes msg.
	withdraw(ctx context.Context, name string, stored []byte, ttl time.Duration, msg []byte) error
	// opens returns every supplier's key (an open, or the close that
	// ended it) with the time it has left; a key it cannot read as a
	// string comes back with bad set. Each round trip is bounded by op;
	// only the keys of the names want takes are read.
	opens(ctx context.Context, op time.Duration, want func(name string) bool) ([]storedOpen, error)
	// acquire takes a supplier's probe lease if nobody holds it; if
	// somebody does, left is how long the lease has left (0 if unknown).
	acquire(ctx context.Context, name, replica string, ttl time.Duration) (won bool, left time.Duration, err error)
	// renew extends the lease if replica holds it.
	renew(ctx context.Context, name, replica string, ttl time.Duration) (bool, error)
	// release gives the lease up if replica holds it.
	release(ctx context.Context, name, replica string) error
	// act numbers an operator action (a counter per fleet), stores
	// build(seq) as the supplier's override unless a newer one is stored,
	// and publishes it; a reset also ends the supplier's open key.
	act(ctx context.Context, name string, reset bool, build func(seq int64) []byte) (int64, error)
	// restore stores an action again unless one as new is stored, and
	// raises the counter to seq.
	restore(ctx context.Context, name string, seq int64, msg []byte) error
	// overrides returns every stored action (left unused); a key it
	// cannot read as a hash comes back with bad set.
	overrides(ctx context.Context, op time.Duration, want func(name string) bool) ([]storedOpen, error)
	// counter reads the actions' counter that numbers name's actions;
	// key names it (one per lane in a cluster).
	counter(ctx context.Context, name string) (key string, n int64, err error)
	// vote, for a trip under a quorum, records and publishes the vote,
	// and writes the supplier's open key (announced) if the supplier is
	// open fleet-wide already, or if with this replica's vote q.Replicas
	// replicas have tripped within q.Window.
	vote(ctx context.Context, name, replica string, q Quorum, stored []byte, ttl time.Duration, msg []byte) (announced bool, err error)
	// beat writes replica's heartbeat and returns how many replicas wrote
	// one within window.
	beat(ctx context.Context, replica string, window time.Duration) (live int, err error)
	// report stores a replica's state of a supplier for the view, expiring
	// after ttl.
	report(ctx context.Context, name, replica string, state []byte, ttl time.Duration) error
	// view returns the stored states of at most MaxViewReplicas replicas
	// of a supplier (names a replica could have), how many other
	// reporters it left out, the holder of its probe lease and what the
	// lease has left.
	view(ctx context.Context, name string) (states map[string]storedOpen, omitted int, prober string, left time.Duration, err error)
}

// feed is one subscription.
type feed interface {
	// receive returns the next message's payload, or nil for any other
	// sign of life (a pong); an error satisfying isTimeout when nothing
	// came within timeout.
	receive(ctx context.Context, timeout time.Duration) ([]byte, error)
	// ping asks for a sign of life.
	ping(ctx context.Context) error
	// close ends the subscription; a receive in progress returns.
	close() error
}

// storedOpen is an open key (or an override) as read back.
type storedOpen struct {
	payload []byte
	left    time.Duration // the key's remaining expiry
	// limit, for an operator action, is the fleet's counter read with it:
	// no operator numbered an action above it.
	limit int64
	// bad, if not nil, is why the key could not be read: it holds another
	// type (an operator's mistake, another program's key). That is bad
	// data, as a malformed message is: the link counts it and goes on
	// with the other keys, rather than failing every catch-up on it.
	bad error
}

// wrongType reports whether Redis refused a command because its key holds
// another type.
func wrongType(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "WRONGTYPE")
}

// redisBackend keeps the fleet in Redis. Its keys and channel start with
// "{prefix}:": the channel events, the set open of suppliers with an open
// key, the keys open:<supplier> and lease:<supplier>.
type redisBackend struct {
	rdb                             redis.UniversalClient
	channel, suppliers, open, lease string
	seq, overridden, override       string
	state, reporters, votes, live   string
	// sharded, in a cluster, publishes and subscribes with SPUBLISH and
	// SSUBSCRIBE (Redis 7), so that a message travels only within the
	// shard of its channel; nil or false: PUBLISH and SUBSCRIBE.
	sharded *atomic.Bool
}

func newRedisBackend(rdb redis.UniversalClient, prefix string) *redisBackend {
	return newLane(rdb, "{"+prefix+"}:", nil)
}

// newLane is a backend whose keys and channel start with tag.
func newLane(rdb redis.UniversalClient, tag string, sharded *atomic.Bool) *redisBackend {
	return &redisBackend{rdb: rdb, channel: tag + "events", suppliers: tag + "open", open: tag + "open:", lease: tag + "lease:",
		seq: tag + "seq", overridden: tag + "overrides", override: tag + "override:",
		state: tag + "state:", reporters: tag + "reporters:", votes: tag + "votes:", live: tag + "live", sharded: sharded}
}

// releaseScript deletes a lease if this replica holds it.
var releaseScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// renewScript extends a lease if this replica holds it.
var renewScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)

func (r *redisBackend) subscribe(ctx context.Context) (feed, error) {
	var ps *redis.PubSub
	if r.isSharded() {
		ps = r.rdb.SSubscribe(ctx) // no channel yet: nothing is sent
		err := ps.SSubscribe(ctx, r.channel)
		if err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown command") {
			r.sharded.Store(false) // before Redis 7: plain pub/sub
			_ = ps.Close()
			return r.subscribe(ctx)
		}
		if err != nil {
			_ = ps.Close()
			return nil, err
		}
	} else {
		ps = r.rdb.Subscribe(ctx)
		if err := ps.Subscribe(ctx, r.channel); err != nil {
			_ = ps.Close()
			return nil, err
		}
	}
	f := &redisFeed{ps: ps}
	// The confirmation comes before anything published after it.
	wait := time.Second
	if d, ok := ctx.Deadline(); ok {
		wait = max(time.Until(d), time.Millisecond)
	}
	if _, err := ps.ReceiveTimeout(ctx, wait); err != nil {
		_ = ps.Close()
		return nil, err
	}
	return f, nil
}

func (r *redisBackend) announce(ctx context.Context, name string, stored []byte, ttl time.Duration, msg []byte) error {
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, r.open+name, stored, ttl)
		p.SAdd(ctx, r.suppliers, name)
		r.publish(ctx, p, msg)
		return nil
	})
	return err
}

// announceAll writes many open keys and publishes their messages in one
// pipeline (not a transaction: a catch-up's rewrite of its own trips).
func (r *redisBackend) announceAll(ctx context.Context, trips []announcement) error {
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, t := range trips {
			p.Set(ctx, r.open+t.name, t.stored, t.ttl)
			p.SAdd(ctx, r.suppliers, t.name)
			r.publish(ctx, p, t.msg)
		}
		return nil
	})
	return err
}

func (r *redisBackend) isSharded() bool { return r.sharded != nil && r.sharded.Load() }

// publish queues the message on the fleet's channel in p.
func (r *redisBackend) publish(ctx context.Context, p redis.Pipeliner, msg []byte) {
	if r.isSharded() {
		p.SPublish(ctx, r.channel, msg)
	} else {
		p.Publish(ctx, r.channel, msg)
	}
}

func (r *redisBackend) withdraw(ctx context.Context, name string, stored []byte, ttl time.Duration, msg []byte) error {
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, r.open+name, stored, ttl)
		p.SAdd(ctx, r.suppliers, name)
		r.publish(ctx, p, msg)
		return nil
	})
	return err
}

// catchUpChunk is how many keys one round trip of a catch-up reads.
const catchUpChunk = 1000

// step runs f with a context of its own, bounded by op, for each step of
// a catch-up: a fleet with many keys takes several round trips, each
// bounded, rather than one bound for all.
func step(ctx context.Context, op time.Duration, f func(context.Context) error) error {
	sctx, cancel := context.WithTimeout(ctx, op)
	defer cancel()
	return f(sctx)
}

// members lists the names of set that want takes, by SSCAN with COUNT
// catchUpChunk, each round trip bounded by op: a set that something else
// filled with names this replica has no use for costs round trips, not
// memory.
func (r *redisBackend) members(ctx context.Context, op time.Duration, set string, want func(string) bool) ([]string, error) {
	seen := map[string]struct{}{}
	var names []string
	var cursor uint64
	for {
		var batch []string
		err := step(ctx, op, func(ctx context.Context) (err error) {
			batch, cursor, err = r.rdb.SScan(ctx, set, cursor, "", catchUpChunk).Result()
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, name := range batch {
			if _, dup := seen[name]; !dup && want(name) { // SSCAN may repeat a name
				seen[name] = struct{}{}
				names = append(names, name)
			}
		}
		if cursor == 0 {
			return names, nil
		}
	}
}

func (r *redisBackend) opens(ctx context.Context, op time.Duration, want func(string) bool) ([]storedOpen, error) {
	names, err := r.members(ctx, op, r.suppliers, want)
	if wrongType(err) {
		return []storedOpen{{bad: fmt.Errorf("key %s: %w", r.suppliers, err)}}, nil
	}
	if err != nil {
		return nil, err
	}
	var out []storedOpen
	var expired []any
	for chunk := range slices.Chunk(names, catchUpChunk) {
		gets := make([]*redis.StringCmd, len(chunk))
		pttls := make([]*redis.DurationCmd, len(chunk))
		err := step(ctx, op, func(ctx context.Context) error {
			_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i, name := range chunk {
					gets[i] = p.Get(ctx, r.open+name)
					pttls[i] = p.PTTL(ctx, r.open+name)
				}
				return nil
			})
			return err
		})
		if err != nil && !errors.Is(err, redis.Nil) && !wrongType(err) {
			return nil, err
		}
		for i, name := range chunk {
			get, pttl := gets[i], pttls[i]
			switch {
			case wrongType(get.Err()):
				out = append(out, storedOpen{bad: fmt.Errorf("key %s: %w", r.open+name, get.Err())})
			case errors.Is(get.Err(), redis.Nil) || (get.Err() == nil && pttl.Err() == nil && pttl.Val() <= 0):
				expired = append(expired, name)
			case get.Err() != nil:
				return nil, get.Err()
			case pttl.Err() != nil:
				return nil, pttl.Err()
			default:
				p, _ := get.Bytes()
				out = append(out, storedOpen{payload: p, left: pttl.Val()})
			}
		}
	}
	if len(expired) > 0 { // tidy the set; best effort
		_ = step(ctx, op, func(ctx context.Context) error { return r.rdb.SRem(ctx, r.suppliers, expired...).Err() })
	}
	return out, nil
}

func (r *redisBackend) acquire(ctx context.Context, name, replica string, ttl time.Duration) (bool, time.Duration, error) {
	// SET key replica PX ttl NX: set only if absent, with an expiry; and
	// in the same round trip, how long the lease has left if it was taken.
	var set *redis.Cmd
	var pttl *redis.DurationCmd
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		set = p.Do(ctx, "SET", r.lease+name, replica, "PX", ttl.Milliseconds(), "NX")
		pttl = p.PTTL(ctx, r.lease+name)
		return nil
	})
	switch {
	case set.Err() == nil:
		return true, 0, nil
	case errors.Is(set.Err(), redis.Nil):
		return false, max(pttl.Val(), 0), nil
	}
	return false, 0, err
}

func (r *redisBackend) renew(ctx context.Context, name, replica string, ttl time.Duration) (bool, error) {
	n, err := renewScript.Run(ctx, r.rdb, []string{r.lease + name}, replica, ttl.Milliseconds()).Int()
	return err == nil && n == 1, err
}

func (r *redisBackend) release(ctx context.Context, name, replica string) error {
	return releaseScript.Run(ctx, r.rdb, []string{r.lease + name}, replica).Err()
}

// redisFeed is a Redis subscription.
type redisFeed struct{ ps *redis.PubSub }

func (f *redisFeed) receive(ctx context.Context, timeout time.Duration) ([]byte, error) {
	v, err := f.ps.ReceiveTimeout(ctx, timeout)
	if err != nil {
		return nil, err
	}
	if m, ok := v.(*redis.Message); ok {
		return []byte(m.Payload), nil
	}
	return nil, nil
}

func (f *redisFeed) ping(ctx context.Context) error { return f.ps.Ping(ctx) }
func (f *redisFeed) close() error                   { return f.ps.Close() }

// luaInt reads a string as an action's number: digits only, at most 15
// of them (below 10^15, exact in Lua's doubles), else nil. The scripts
// store numbers only as the strings they checked, never a Lua number,
// which Redis would write as a float ("9.2233720368547758e+18") that INCR
// then refuses.
const luaInt = `
local function int(s)
  if type(s) == "string" and #s > 0 and #s <= 15 and string.match(s, "^%d+$") then return tonumber(s) end
  return nil
end
local function counter(key)
  local raw = redis.call("GET", key)
  if not raw then return 0 end
  local n = int(raw)
  if not n then
    return nil, redis.error_reply("ERR fleet: the counter " .. key .. " holds '" .. string.sub(raw, 1, 40) ..
      "', not an integer below 10^15: delete it, and the replicas restore it")
  end
  return n
end
`

// putOverride stores an action (KEYS[1], a hash of seq and msg) unless a
// newer one is stored, lists the supplier (KEYS[2]), raises the counter
// (KEYS[3]) to its seq, and publishes it on KEYS[6] with the command
// ARGV[4] (PUBLISH or SPUBLISH; the channel is among the keys so that a
// cluster checks its slot) if it was stored. A reset (ARGV[5] = 1) also
// ends the supplier's open key (KEYS[4], listed in KEYS[5]). A stored
// action numbered above the counter was numbered by no operator: it is
// replaced.
var putOverride = redis.NewScript(luaInt + `
local seq = int(ARGV[1])
if not seq or seq < 1 then return redis.error_reply("ERR fleet: seq must be an integer in [1, 10^15), got '" .. string.sub(ARGV[1], 1, 40) .. "'") end
local n, bad = counter(KEYS[3])
if bad then return bad end
if n < seq then
  redis.call("SET", KEYS[3], ARGV[1])
  n = seq
end
local cur = int(redis.call("HGET", KEYS[1], "seq") or "0")
if cur and cur <= n and cur >= seq then return 0 end
redis.call("HSET", KEYS[1], "seq", ARGV[1], "msg", ARGV[2])
redis.call("SADD", KEYS[2], ARGV[3])
if ARGV[5] == "1" then
  redis.call("DEL", KEYS[4])
  redis.call("SREM", KEYS[5], ARGV[3])
end
redis.call(ARGV[4], KEYS[6], ARGV[2])
return 1`)

// nextSeq numbers an operator action: INCR of the counter (KEYS[1]),
// refused with an error naming the key if it does not hold an integer
// below 10^15.
var nextSeq = redis.NewScript(luaInt + `
local n, bad = counter(KEYS[1])
if bad then return bad end
if n >= 999999999999999 then return redis.error_reply("ERR fleet: the counter " .. KEYS[1] .. " is exhausted") end
return redis.call("INCR", KEYS[1])`)

func (r *redisBackend) act(ctx context.Context, name string, reset bool, build func(int64) []byte) (int64, error) {
	seq, err := nextSeq.Run(ctx, r.rdb, []string{r.seq}).Int64()
	if err != nil {
		return 0, err
	}
	return seq, r.put(ctx, name, seq, build(seq), reset)
}

func (r *redisBackend) restore(ctx context.Context, name string, seq int64, msg []byte) error {
	return r.put(ctx, name, seq, msg, false)
}

func (r *redisBackend) put(ctx context.Context, name string, seq int64, msg []byte, resets bool) error {
	reset := "0"
	if resets {
		reset = "1"
	}
	keys := []string{r.override + name, r.overridden, r.seq, r.open + name, r.suppliers, r.channel}
	publish := "PUBLISH"
	if r.isSharded() {
		publish = "SPUBLISH"
	}
	return putOverride.Run(ctx, r.rdb, keys, seq, msg, name, publish, reset).Err()
}

func (r *redisBackend) overrides(ctx context.Context, op time.Duration, want func(string) bool) ([]storedOpen, error) {
	names, err := r.members(ctx, op, r.overridden, want)
	if wrongType(err) {
		return []storedOpen{{bad: fmt.Errorf("key %s: %w", r.overridden, err)}}, nil
	}
	if err != nil {
		return nil, err
	}
	var out []storedOpen
	for chunk := range slices.Chunk(names, catchUpChunk) {
		gets := make([]*redis.StringCmd, len(chunk))
		var counter *redis.StringCmd
		err := step(ctx, op, func(ctx context.Context) error {
			_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i, name := range chunk {
					gets[i] = p.HGet(ctx, r.override+name, "msg")
				}
				counter = p.Get(ctx, r.seq) // after the actions: it numbered each of them
				return nil
			})
			return err
		})
		if err != nil && !errors.Is(err, redis.Nil) && !wrongType(err) {
			return nil, err
		}
		limit, cerr := parseCounter(r.seq, counter)
		for i, name := range chunk {
			p, err := gets[i].Bytes()
			switch {
			case errors.Is(err, redis.Nil):
			case wrongType(err):
				out = append(out, storedOpen{bad: fmt.Errorf("key %s: %w", r.override+name, err)})
			case err != nil:
				return nil, err
			case cerr != nil:
				out = append(out, storedOpen{bad: cerr})
			default:
				out = append(out, storedOpen{payload: p, limit: limit})
			}
		}
	}
	return out, nil
}

// parseCounter reads the actions' counter from a GET of it: 0 if absent.
func parseCounter(key string, get *redis.StringCmd) (int64, error) {
	v, err := get.Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > maxSeq {
		return 0, fmt.Errorf("key %s holds %q, not an integer in [0, %d]", key, v, maxSeq)
	}
	return n, nil
}

func (r *redisBackend) counter(ctx context.Context, _ string) (string, int64, error) {
	var get *redis.StringCmd
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error { get = p.Get(ctx, r.seq); return nil })
	if err != nil && !errors.Is(err, redis.Nil) {
		return r.seq, 0, err
	}
	n, err := parseCounter(r.seq, get)
	return r.seq, n, err
}

func (r *redisBackend) report(ctx context.Context, name, replica string, state []byte, ttl time.Duration) error {
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, r.state+name+":"+replica, state, ttl)
		p.SAdd(ctx, r.reporters+name, replica)
		p.PExpire(ctx, r.reporters+name, ttl)
		return nil
	})
	return err
}

func (r *redisBackend) view(ctx context.Context, name string) (map[string]storedOpen, int, string, time.Duration, error) {
	// The set of reporters is written by anything that can write the
	// fleet's keys: read a bounded part of it, by SSCAN, and count the rest.
	set := r.reporters + name
	total, err := r.rdb.SCard(ctx, set).Result()
	if err != nil {
		return nil, 0, "", 0, err
	}
	seen := map[string]struct{}{}
	var replicas []string
	var cursor uint64
	for round := 0; round < viewScanRounds && len(replicas) < MaxViewReplicas; round++ {
		var batch []string
		batch, cursor, err = r.rdb.SScan(ctx, set, cursor, "", catchUpChunk).Result()
		if err != nil {
			return nil, 0, "", 0, err
		}
		for _, rep := range batch {
			if _, dup := seen[rep]; dup || !validReplica(rep) || len(replicas) == MaxViewReplicas {
				continue // SSCAN may repeat a name
			}
			seen[rep] = struct{}{}
			replicas = append(replicas, rep)
		}
		if cursor == 0 {
			break
		}
	}
	gets := make([]*redis.StringCmd, len(replicas))
	pttls := make([]*redis.DurationCmd, len(replicas))
	var holder *redis.StringCmd
	var left *redis.DurationCmd
	_, err = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, rep := range replicas {
			gets[i] = p.Get(ctx, r.state+name+":"+rep)
			pttls[i] = p.PTTL(ctx, r.state+name+":"+rep)
		}
		holder = p.Get(ctx, r.lease+name)
		left = p.PTTL(ctx, r.lease+name)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, 0, "", 0, err
	}
	out := map[string]storedOpen{}
	for i, rep := range replicas {
		if b, err := gets[i].Bytes(); err == nil && pttls[i].Val() > 0 {
			out[rep] = storedOpen{payload: b, left: pttls[i].Val()}
		}
	}
	return out, max(int(total)-len(replicas), 0), holder.Val(), max(left.Val(), 0), nil
}

// viewScanRounds bounds the SSCAN round trips of a view: a set of
// reporters filled with names no replica can have costs at most that many.
const viewScanRounds = 10

// voteScript records a replica's trip (ARGV[1]) in the supplier's votes
// (KEYS[1], scored by the server's clock in ms, forgetting those older
// than ARGV[2] ms), publishes it (ARGV[7] on KEYS[4] with the command
// ARGV[8]: every vote travels, and each receiver counts the quorum
// itself), and, if the supplier's key (KEYS[2]) holds an open already or
// the votes reach ARGV[3], writes the key (ARGV[4], expiring after ARGV[5]
// ms) and lists the supplier (KEYS[3], member ARGV[6]), for the replicas
// that catch up later. It returns 1 if it wrote the key.
var voteScript = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call("ZADD", KEYS[1], now, ARGV[1])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
redis.call("PEXPIRE", KEYS[1], window)
redis.call(ARGV[8], KEYS[4], ARGV[7])
local cur = redis.call("GET", KEYS[2])
local open = cur and string.find(cur, '"kind":"open"', 1, true)
if not open and redis.call("ZCARD", KEYS[1]) < tonumber(ARGV[3]) then return 0 end
redis.call("SET", KEYS[2], ARGV[4], "PX", ARGV[5])
redis.call("SADD", KEYS[3], ARGV[6])
return 1`)

func (r *redisBackend) vote(ctx context.Context, name, replica string, q Quorum, stored []byte, ttl time.Duration, msg []byte) (bool, error) {
	publish := "PUBLISH"
	if r.isSharded() {
		publish = "SPUBLISH"
	}
	keys := []string{r.votes + name, r.open + name, r.suppliers, r.channel}
	n, err := voteScript.Run(ctx, r.rdb, keys, replica, q.Window.Milliseconds(), q.Replicas,
		stored, max(ttl.Milliseconds(), 1), name, msg, publish).Int()
	return n == 1, err
}
