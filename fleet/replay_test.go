package fleet

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// severed is one replica's way to the hub, which a test cuts and heals
// while the other replicas stay connected: a partition between that
// replica and Redis.
type severed struct {
	backend
	mu    sync.Mutex
	cut   bool
	feeds []feed
}

// sever cuts the way: the subscription ends, and every command fails.
func (s *severed) sever() {
	s.mu.Lock()
	s.cut = true
	feeds := s.feeds
	s.feeds = nil
	s.mu.Unlock()
	for _, f := range feeds {
		_ = f.close()
	}
}

func (s *severed) heal() {
	s.mu.Lock()
	s.cut = false
	s.mu.Unlock()
}

func (s *severed) isCut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cut
}

func (s *severed) subscribe(ctx context.Context) (feed, error) {
	if s.isCut() {
		return nil, errHubDown
	}
	f, err := s.backend.subscribe(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.feeds = append(s.feeds, f)
	s.mu.Unlock()
	return f, nil
}

func (s *severed) announce(ctx context.Context, name string, stored []byte, ttl time.Duration, msg []byte) error {
	if s.isCut() {
		return errHubDown
	}
	return s.backend.announce(ctx, name, stored, ttl, msg)
}

func (s *severed) withdraw(ctx context.Context, name string, stored []byte, ttl time.Duration, msg []byte) error {
	if s.isCut() {
		return errHubDown
	}
	return s.backend.withdraw(ctx, name, stored, ttl, msg)
}

func (s *severed) opens(ctx context.Context, op time.Duration, want func(string) bool) ([]storedOpen, error) {
	if s.isCut() {
		return nil, errHubDown
	}
	return s.backend.opens(ctx, op, want)
}

func (s *severed) acquire(ctx context.Context, name, replica string, ttl time.Duration) (bool, time.Duration, error) {
	if s.isCut() {
		return false, 0, errHubDown
	}
	return s.backend.acquire(ctx, name, replica, ttl)
}

func (s *severed) renew(ctx context.Context, name, replica string, ttl time.Duration) (bool, error) {
	if s.isCut() {
		return false, errHubDown
	}
	return s.backend.renew(ctx, name, replica, ttl)
}

// A replica cut off from Redis while another closes the supplier misses
// the message, and reconnects only after its backoff wait, which the cut
// has grown to BackoffMax. Redis is back for it (healed) just after the
// longest open period the trip could have held a replica for: it still
// reads the close from the supplier's key, so a replica with no calls of
// its own to probe with does not stay open.
func TestVirtualAReplicaBackAfterItsBackoffReadsTheClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(hubLatency)
		g := virtualGroup(nil)
		a, err := newLink(virtualConfig("a"), g, h)
		require.NoError(t, err)
		way := &severed{backend: h}
		b, err := newLink(virtualConfig("b"), g, way)
		require.NoError(t, err)
		defer func() {
			require.NoError(t, b.Close(context.Background()))
			require.NoError(t, a.Close(context.Background()))
		}()
		ea, err := a.Group().Executor("payments")
		require.NoError(t, err)
		eb, err := b.Group().Executor("payments")
		require.NoError(t, err)
		synctest.Wait()

		ea.Breaker().Trip(breaker.Saturation)
		time.Sleep(time.Second)
		require.Equal(t, breaker.Open, eb.Breaker().State(), "b heard the trip")
		way.sever()
		time.Sleep(time.Second)
		require.False(t, b.Stats().Up, "b's link is down")

		// The supplier has recovered; only a has calls, so only a probes.
		ok := func(context.Context) (int, error) { return 1, nil }
		for i := 0; i < 100 && ea.Breaker().State() != breaker.Closed; i++ {
			if f, err := executor.Submit(context.Background(), ea, ok); err == nil {
				_, _ = f.Await(context.Background())
			}
			time.Sleep(100 * time.Millisecond)
		}
		require.Equal(t, breaker.Closed, ea.Breaker().State(), "a closes on its probe")
		synctest.Wait()
		require.GreaterOrEqual(t, a.Stats().Published, uint64(2), "a published its trip and its close")
		require.Equal(t, breaker.Open, eb.Breaker().State(), "b has heard nothing yet")

		time.Sleep(maxProbeIn(g, "payments", DefaultMargin) + 100*time.Millisecond)
		way.heal()
		time.Sleep(b.cfg.BackoffMax*3/2 + 2*b.cfg.OpTimeout)
		require.True(t, b.Stats().Up, "b's link is back")
		s := eb.Breaker().Stats()
		assert.Equal(t, breaker.Closed, s.State, "b read the close from the key")
		assert.Equal(t, breaker.Remote, s.Reason)
	})
}
