package fleet_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

// A replica that recovers a supplier while Redis is down tells the fleet
// once the link is back: the close it could not send is replayed, and the
// other replicas, which have no calls of their own to probe with, close
// with reason Remote instead of staying open until their own probe.
func TestACloseWhileRedisIsDownIsReplayed(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 3)
	a := rs[0]
	a.payments(t).Breaker().Trip(breaker.Saturation)
	for _, r := range rs[1:] {
		eventually(t, patience, r.name+" opens", func() bool { return r.state(t).State == breaker.Open })
	}

	srv.stop()
	for _, r := range rs {
		eventually(t, patience, r.name+" link down", func() bool { return !r.link.Stats().Up })
	}
	// The supplier recovers; only a has calls, so only a probes, and it
	// closes while its link is down.
	s := &supplier{}
	s.set(true, false)
	stop := traffic(t, rs[:1], s)
	eventually(t, patience, "a closes on its own probe", func() bool { return a.state(t).State == breaker.Closed })
	stop()
	// The publisher counts the close after the breaker has closed.
	eventually(t, patience, "the close found the link down", func() bool { return a.link.Stats().Unsent >= 1 })
	for _, r := range rs[1:] {
		assert.Equal(t, breaker.Open, r.state(t).State, "%s has heard nothing yet", r.name)
	}

	// Redis comes back empty: a replays its close, and the others close.
	srv.start()
	for _, r := range rs[1:] {
		eventually(t, patience, r.name+" learns the close", func() bool { return r.state(t).State == breaker.Closed })
		assert.Equal(t, breaker.Remote, r.state(t).Reason)
	}
	eventually(t, patience, "counted", func() bool { return a.link.Stats().Replayed >= 1 })
	for _, r := range rs[1:] {
		assert.Empty(t, callsBy(s, r.name), "%s never probed", r.name)
	}
}

// The close is written to the supplier's key as well: a replica whose
// link comes back after the replay, and so misses the message, reads it.
func TestAReplicaThatReconnectsAfterTheReplayReadsTheClose(t *testing.T) {
	srv := startRedis(t)
	a := startReplica(t, srv, "a")
	// b reaches Redis through a proxy the test cuts and restores: b's
	// link is down while a's is up.
	p := startProxy(t, srv.addr())
	b := startReplicaVia(t, p.addr(), "b")
	a.payments(t).Breaker().Trip(breaker.Saturation)
	eventually(t, patience, "b opens", func() bool { return b.state(t).State == breaker.Open })

	p.cut()
	eventually(t, patience, "b link down", func() bool { return !b.link.Stats().Up })
	s := &supplier{}
	s.set(true, false)
	stop := traffic(t, []*replica{a}, s)
	eventually(t, patience, "a closes on its own probe", func() bool { return a.state(t).State == breaker.Closed })
	stop()
	require.Equal(t, breaker.Open, b.state(t).State)

	p.restore()
	eventually(t, patience, "b reads the close from the key", func() bool { return b.state(t).State == breaker.Closed })
	assert.Equal(t, breaker.Remote, b.state(t).Reason)
	assert.Empty(t, callsBy(s, "b"))
}

func callsBy(s *supplier, name string) []probe {
	var out []probe
	for _, p := range s.made() {
		if p.replica == name {
			out = append(out, p)
		}
	}
	return out
}
