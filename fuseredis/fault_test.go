package fuseredis_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// load is a few callers sending GET to one client in a loop, each pausing a
// little between commands, until halt (or 30 s at most).
type load struct {
	stop     chan struct{}
	wg       sync.WaitGroup
	ok       atomic.Int64 // answers (redis.Nil included)
	refused  atomic.Int64 // breaker.ErrOpen, executor.ErrSaturated or ErrBusy
	failed   atomic.Int64 // any other error
	lastFail atomic.Value
}

func startLoad(c *redis.Client, callers int) *load {
	l := &load{stop: make(chan struct{})}
	deadline := time.Now().Add(30 * time.Second)
	for range callers {
		l.wg.Go(func() {
			// The offered load: a command per caller every 2 ms at most,
			// so that refused commands, which return at once, do not spin.
			pace := time.NewTicker(2 * time.Millisecond)
			defer pace.Stop()
			for time.Now().Before(deadline) {
				select {
				case <-l.stop:
					return
				case <-pace.C:
				}
				err := c.Get(context.Background(), "k").Err()
				switch {
				case err == nil, errors.Is(err, redis.Nil):
					l.ok.Add(1)
				case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy):
					l.refused.Add(1)
				default:
					l.failed.Add(1)
					l.lastFail.Store(err.Error())
				}
			}
		})
	}
	return l
}

func (l *load) halt() {
	close(l.stop)
	l.wg.Wait()
}

// fault is one way for a node to fail: break it, and heal it again.
type fault struct {
	name    string
	reasons []breaker.Reason // why its breaker may open
	// minTrip is the earliest the breaker may open, after the fault: a
	// hang must first hold the slots for the stuck criterion's 0.5 s.
	minTrip time.Duration
	// maxTrip is the latest it may open: generous, for a loaded machine.
	maxTrip time.Duration
	breakIt func(t *testing.T, s *server) (heal func())
}

var faults = []fault{
	{
		name:    "the node paused with CLIENT PAUSE ALL trips on its stuck slots",
		reasons: []breaker.Reason{breaker.Saturation}, minTrip: 490 * time.Millisecond, maxTrip: 2 * time.Second,
		breakIt: func(t *testing.T, s *server) func() {
			const pause = 2500 * time.Millisecond
			ctl := s.plain(t)
			require.NoError(t, ctl.Do(context.Background(), "client", "pause", pause.Milliseconds(), "all").Err())
			// Redis holds this PING until the pause ends: the end of the
			// fault is Redis's answer, not a guess at its time.
			return func() { _ = ctl.Ping(context.Background()).Err() }
		},
	},
	{
		name:    "the node stopped with SIGSTOP trips on its stuck slots",
		reasons: []breaker.Reason{breaker.Saturation}, minTrip: 490 * time.Millisecond, maxTrip: 2 * time.Second,
		breakIt: func(t *testing.T, s *server) func() {
			s.freeze()
			return s.thaw
		},
	},
	{
		// Each command's refused connection is one failure. go-redis
		// v9.15 and later retry a refused dial inside the command, with
		// 100 ms of back-off between tries, so its commands also hold
		// their slots for some 0.4 s: whichever comes first, five
		// failures in a row or the bulkhead full of such commands, opens
		// the breaker.
		name:    "the killed node trips on its refused connections",
		reasons: []breaker.Reason{breaker.ConsecutiveFailures, breaker.Saturation}, minTrip: 0, maxTrip: 2 * time.Second,
		breakIt: func(t *testing.T, s *server) func() {
			s.stop()
			return s.start
		},
	},
}

// TestFaultsTripTheNodeAlone breaks one of two nodes behind one group and
// checks the whole story: the node's breaker opens in time and for the
// right reason, its commands are then refused naming it, the other node is
// served throughout, every slot and connection comes back after the fault,
// and the breaker closes again.
func TestFaultsTripTheNodeAlone(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			a, b := startRedis(t), startRedis(t)
			g, rec := testGroup(t)
			ca, cb := a.hooked(t, g), b.hooked(t, g)
			ctx := context.Background()
			for range 40 { // a latency history for the stuck criterion
				require.NoError(t, ca.Set(ctx, "k", "v", 0).Err())
				require.NoError(t, cb.Set(ctx, "k", "v", 0).Err())
			}

			start := time.Now()
			heal := f.breakIt(t, a)
			la, lb := startLoad(ca, 8), startLoad(cb, 2)
			eventually(t, 10*time.Second, "the broken node's breaker opens", func() bool {
				_, ok := firstTransition(rec.Events(), a.addr(), breaker.Open)
				return ok
			})
			trip, _ := firstTransition(rec.Events(), a.addr(), breaker.Open)
			took := trip.Time.Sub(start)
			t.Logf("%s: opened %v after the fault (%s)", a.addr(), took.Round(time.Millisecond), trip.Reason)
			assert.Contains(t, f.reasons, trip.Reason, "got reason %s, want one of %v", trip.Reason, f.reasons)
			assert.GreaterOrEqual(t, took, f.minTrip)
			assert.LessOrEqual(t, took, f.maxTrip)

			err := ca.Get(ctx, "k").Err()
			require.ErrorIs(t, err, breaker.ErrOpen)
			assert.Contains(t, err.Error(), a.addr(), "the refusal names the node")

			served := lb.ok.Load()
			eventually(t, 5*time.Second, "the other node is served while the first is broken", func() bool {
				return lb.ok.Load() >= served+20
			})
			heal()
			la.halt()
			lb.halt()
			assert.Zero(t, lb.failed.Load()+lb.refused.Load(), "the other node: %v", lb.lastFail.Load())
			assert.Empty(t, transitionsOf(rec.Events(), b.addr()), "the other node's breaker never moved")
			assert.Positive(t, la.refused.Load(), "the broken node's commands were refused")

			eventually(t, 10*time.Second, "every slot and connection of the broken node is back", func() bool {
				return stats(t, g, a.addr()).InUse == 0 && inUse(ca) == 0
			})
			eventually(t, 15*time.Second, "the broken node's breaker closes", func() bool {
				_ = ca.Get(ctx, "k").Err()
				return stats(t, g, a.addr()).Breaker.State == breaker.Closed
			})
			require.NoError(t, ca.Ping(ctx).Err())
			st := stats(t, g, a.addr())
			assert.Zero(t, st.InUse)
			assert.Zero(t, inUse(ca))
			assert.Zero(t, stats(t, g, b.addr()).InUse)
			assert.Zero(t, inUse(cb))
		})
	}
}
