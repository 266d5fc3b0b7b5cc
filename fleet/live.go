package fleet

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Live replicas, for a quorum by share (Quorum.Share). Each link writes a
// heartbeat into one sorted set of the fleet, {prefix}:live (in a cluster,
// the first lane's), scored by the Redis server's clock: on subscribing,
// then every HealthCheck on the subscription's goroutine. A trip counts
// the heartbeats of the last liveWindow (its own included, written by the
// same script) and votes with ⌈Share × live⌉. Without a share nothing is
// written.

// liveWindow is how recent a heartbeat must be to count a replica live.
func (l *Link) liveWindow() time.Duration { return 3 * l.cfg.HealthCheck }

// quorum returns the votes a trip needs now.
func (l *Link) quorum(ctx context.Context) (int, error) {
	q := l.cfg.Quorum
	if q.Share == 0 {
		return q.need(0), nil
	}
	live, err := l.be.beat(ctx, l.cfg.Replica, l.liveWindow())
	if err == nil {
		l.live.Store(int64(live))
	}
	return q.need(live), err
}

// heartbeat writes this replica's heartbeat if the last one, at *last, is
// a HealthCheck old, with a quorum by share only. Best effort: a failure
// is the subscription's health check's to notice.
func (l *Link) heartbeat(last *time.Time) {
	if l.cfg.Quorum.Share == 0 || time.Since(*last) < l.cfg.HealthCheck {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout)
	defer cancel()
	if live, err := l.be.beat(ctx, l.cfg.Replica, l.liveWindow()); err == nil {
		l.live.Store(int64(live)) // the receivers' quorum by share counts it too
		*last = time.Now()
	}
}

// beatScript scores replica ARGV[1] with the server's clock (ms) in
// KEYS[1], forgets members older than ARGV[2] ms and those more than that
// ahead of the clock (no replica wrote them: forged, as the set is not
// signed), and returns how many are left.
var beatScript = redis.NewScript(`
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call("ZADD", KEYS[1], now, ARGV[1])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - window)
redis.call("ZREMRANGEBYSCORE", KEYS[1], "(" .. (now + window), "+inf")
redis.call("PEXPIRE", KEYS[1], window)
return redis.call("ZCARD", KEYS[1])`)

func (r *redisBackend) beat(ctx context.Context, replica string, window time.Duration) (int, error) {
	n, err := beatScript.Run(ctx, r.rdb, []string{r.live}, replica, max(window.Milliseconds(), 1)).Int()
	return n, err
}

func (c *clusterBackend) beat(ctx context.Context, replica string, window time.Duration) (int, error) {
	return c.lanes[0].beat(ctx, replica, window)
}
