package fleet

import (
	"context"
	"errors"
	"hash/fnv"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis Cluster. With a *redis.ClusterClient the fleet's keys and channel
// are spread over clusterLanes lanes: lane k's keys and channel start with
// "{prefix:k}:", a hash tag, so that they live in one slot, and each
// supplier belongs to one lane (a hash of its name): its open key, lease,
// override and messages live on one shard. Each lane has its own
// subscription, sharded (SSUBSCRIBE and SPUBLISH) where the server has it
// (Redis 7), plain otherwise. A shard that fails takes only its lanes
// down: the others keep carrying trips, and the suppliers of the lost lanes
// are protected by each replica alone (their lease contention fails, so
// every replica probes on its own) until the shard is back, when the
// link catches up as on any reconnection.

// clusterLanes is the number of lanes in a cluster.
const clusterLanes = 16

// errResync tells the session that a lane has subscribed again: the link
// catches up (reasserts its open breakers, reads the fleet's keys, replays
// what it missed).
var errResync = errors.New("fleet: a lane of the cluster is back")

type clusterBackend struct {
	lanes  []*redisBackend
	health time.Duration
	backof time.Duration
	// reload asks the client to read the cluster's slot map again (a
	// lane that cannot subscribe may have a new master: a replica that
	// took over after a failover), instead of waiting for go-redis's own
	// refresh, up to 10 s later.
	reload func()
}

func newClusterBackend(rdb *redis.ClusterClient, prefix string, health, backoff time.Duration) *clusterBackend {
	c := &clusterBackend{health: health, backof: backoff, reload: func() { rdb.ReloadState(context.Background()) }}
	sharded := &atomic.Bool{}
	sharded.Store(true) // until a server says it has no SSUBSCRIBE
	for k := range clusterLanes {
		c.lanes = append(c.lanes, newLane(rdb, "{"+prefix+":"+strconv.Itoa(k)+"}:", sharded))
	}
	return c
}

// lane is the lane of a supplier.
func (c *clusterBackend) lane(name string) *redisBackend {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return c.lanes[h.Sum32()%uint32(len(c.lanes))]
}

func (c *clusterBackend) announce(ctx context.Context, name string, stored []byte, ttl time.Duration, msg []byte) error {
	return c.lane(name).announce(ctx, name, stored, ttl, msg)
}

func (c *clusterBackend) withdraw(ctx context.Context, name string, stored []byte, ttl time.Duration, msg []byte) error {
	return c.lane(name).withdraw(ctx, name, stored, ttl, msg)
}

// announceAll pipelines each lane's trips; it fails if any lane fails.
func (c *clusterBackend) announceAll(ctx context.Context, trips []announcement) error {
	byLane := map[*redisBackend][]announcement{}
	for _, t := range trips {
		l := c.lane(t.name)
		byLane[l] = append(byLane[l], t)
	}
	var errs []error
	for l, ts := range byLane {
		errs = append(errs, l.announceAll(ctx, ts))
	}
	return errors.Join(errs...)
}

func (c *clusterBackend) acquire(ctx context.Context, name, replica string, ttl time.Duration) (bool, time.Duration, error) {
	return c.lane(name).acquire(ctx, name, replica, ttl)
}

func (c *clusterBackend) renew(ctx context.Context, name, replica string, ttl time.Duration) (bool, error) {
	return c.lane(name).renew(ctx, name, replica, ttl)
}

func (c *clusterBackend) release(ctx context.Context, name, replica string) error {
	return c.lane(name).release(ctx, name, replica)
}

func (c *clusterBackend) act(ctx context.Context, name string, reset bool, build func(int64) []byte) (int64, error) {
	return c.lane(name).act(ctx, name, reset, build)
}

func (c *clusterBackend) restore(ctx context.Context, name string, seq int64, msg []byte) error {
	return c.lane(name).restore(ctx, name, seq, msg)
}

func (c *clusterBackend) counter(ctx context.Context, name string) (string, int64, error) {
	return c.lane(name).counter(ctx, name)
}

func (c *clusterBackend) vote(ctx context.Context, name, replica string, q Quorum, stored []byte, ttl time.Duration, msg []byte) (bool, error) {
	return c.lane(name).vote(ctx, name, replica, q, stored, ttl, msg)
}

func (c *clusterBackend) report(ctx context.Context, name, replica string, state []byte, ttl time.Duration) error {
	return c.lane(name).report(ctx, name, replica, state, ttl)
}

func (c *clusterBackend) view(ctx context.Context, name string) (map[string]storedOpen, int, string, time.Duration, error) {
	return c.lane(name).view(ctx, name)
}

// opens reads every lane it can reach; it fails only if it reaches none.
func (c *clusterBackend) opens(ctx context.Context, op time.Duration, want func(string) bool) ([]storedOpen, error) {
	var out []storedOpen
	var errs []error
	for _, l := range c.lanes {
		o, err := l.opens(ctx, op, want)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, o...)
	}
	if len(errs) == len(c.lanes) {
		return nil, errs[0]
	}
	return out, nil
}

func (c *clusterBackend) overrides(ctx context.Context, op time.Duration, want func(string) bool) ([]storedOpen, error) {
	var out []storedOpen
	var errs []error
	for _, l := range c.lanes {
		o, err := l.overrides(ctx, op, want)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, o...)
	}
	if len(errs) == len(c.lanes) {
		return nil, errs[0]
	}
	return out, nil
}

// subscribe subscribes every lane it can; it fails only if none
// subscribes. Each lane then keeps its own subscription (pinging it when
// quiet, subscribing again with backoff when it is lost) on a goroutine
// of the feed, stopped by close.
func (c *clusterBackend) subscribe(ctx context.Context) (feed, error) {
	f := &laneFeeds{items: make(chan laneItem, 64), stop: make(chan struct{}), health: c.health, backoff: c.backof, reload: c.reload}
	subs := make([]feed, len(c.lanes))
	var wg sync.WaitGroup
	var ok atomic.Int32
	var firstErr atomic.Pointer[error]
	for i, l := range c.lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := l.subscribe(ctx)
			if err != nil {
				firstErr.CompareAndSwap(nil, &err)
				return
			}
			subs[i] = s
			ok.Add(1)
		}()
	}
	wg.Wait()
	if ok.Load() == 0 {
		return nil, *firstErr.Load()
	}
	for i, l := range c.lanes {
		f.wg.Add(1)
		go f.run(l, subs[i])
	}
	return f, nil
}

// laneFeeds merges the subscriptions of the lanes.
type laneFeeds struct {
	items   chan laneItem
	stop    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
	live    atomic.Int32
	health  time.Duration
	backoff time.Duration
	reload  func() // after a lane fails to subscribe
	mu      sync.Mutex
	current map[*redisBackend]feed
}

type laneItem struct {
	payload []byte
	resync  bool
}

func (f *laneFeeds) push(it laneItem) {
	select {
	case f.items <- it:
	case <-f.stop:
	}
}

// run keeps one lane's subscription until close; s is its first
// subscription (nil if it failed).
func (f *laneFeeds) run(l *redisBackend, s feed) {
	defer f.wg.Done()
	wait, first := f.backoff, true
	for {
		if s == nil {
			t := time.NewTimer(wait)
			select {
			case <-f.stop:
				t.Stop()
				return
			case <-t.C:
			}
			wait = min(2*wait, 5*time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), f.health)
			var err error
			s, err = l.subscribe(ctx)
			cancel()
			if err != nil {
				s = nil
				f.reload()
				continue
			}
			wait = f.backoff
		}
		if !f.track(l, s) {
			_ = s.close()
			return
		}
		f.live.Add(1)
		if !first {
			f.push(laneItem{resync: true})
		}
		first = false
		f.drain(s)
		f.live.Add(-1)
		f.track(l, nil)
		_ = s.close()
		s = nil
	}
}

// track records a lane's current subscription, for close; false once
// the feed is closed.
func (f *laneFeeds) track(l *redisBackend, s feed) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.stop:
		return false
	default:
	}
	if f.current == nil {
		f.current = map[*redisBackend]feed{}
	}
	f.current[l] = s
	return true
}

// drain hands on a lane's messages until its subscription fails, goes
// silent, or the feed closes.
func (f *laneFeeds) drain(s feed) {
	pinged := false
	for {
		p, err := s.receive(context.Background(), f.health)
		select {
		case <-f.stop:
			return
		default:
		}
		if err != nil {
			if !isTimeout(err) || pinged {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), f.health)
			err = s.ping(ctx)
			cancel()
			if err != nil {
				return
			}
			pinged = true
			continue
		}
		pinged = false
		if p != nil {
			f.push(laneItem{payload: p})
		}
	}
}

// receive returns the next message of any lane, errResync when a lane has
// subscribed again, or a timeout.
func (f *laneFeeds) receive(ctx context.Context, timeout time.Duration) ([]byte, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case it := <-f.items:
		if it.resync {
			return nil, errResync
		}
		return it.payload, nil
	case <-t.C:
		return nil, laneTimeout{}
	case <-f.stop:
		return nil, errLanesClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var errLanesClosed = errors.New("fleet: subscription closed")

type laneTimeout struct{}

func (laneTimeout) Error() string { return "fleet: no message" }
func (laneTimeout) Timeout() bool { return true }

// ping answers for the lanes, which check their own subscriptions: a
// sign of life while one lane is subscribed, an error when none is.
func (f *laneFeeds) ping(context.Context) error {
	if f.live.Load() == 0 {
		return errors.New("fleet: no lane of the cluster is subscribed")
	}
	select {
	case f.items <- laneItem{}:
	default: // messages are waiting: they are the sign of life
	}
	return nil
}

func (f *laneFeeds) close() error {
	f.once.Do(func() {
		f.mu.Lock()
		close(f.stop)
		for _, s := range f.current {
			if s != nil {
				_ = s.close()
			}
		}
		f.mu.Unlock()
		f.wg.Wait()
	})
	return nil
}
