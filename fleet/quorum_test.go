package fleet_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fleet"
)

func startQuorumFleet(t *testing.T, srv *server, n int, q fleet.Quorum) []*replica {
	t.Helper()
	rs := make([]*replica, n)
	for i := range rs {
		name := fmt.Sprintf("q%d", i)
		r := &replica{name: name}
		cfg := linkConfig(srv, t, name)
		cfg.Quorum = q
		l, err := fleet.New(cfg, groupConfig())
		require.NoError(t, err)
		r.link = l
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		eventually(t, 3*time.Second, name+" link up", func() bool { return l.Stats().Up })
		r.payments(t)
		rs[i] = r
	}
	return rs
}

// A trip under a quorum of two: the first replica's trip protects it
// alone; the second within the window opens the supplier everywhere.
func TestAQuorumOfTwoOpensTheFleetOnTheSecondTrip(t *testing.T) {
	srv := startRedis(t)
	rs := startQuorumFleet(t, srv, 4, fleet.Quorum{Replicas: 2, Window: 5 * time.Second})
	rs[0].payments(t).Breaker().Trip(breaker.Saturation)
	eventually(t, time.Second, "q0's trip is a vote", func() bool { return rs[0].link.Stats().Votes == 1 })
	_, err := executor.Submit(context.Background(), rs[0].payments(t), func(context.Context) (int, error) { return 0, nil })
	assert.ErrorIs(t, err, breaker.ErrOpen, "the replica that tripped is protected")
	// A vote publishes nothing and writes no open key: the others stay
	// closed.
	raw := srv.client(t)
	assert.Zero(t, raw.Exists(context.Background(), "{shop}:open:payments").Val())
	for _, r := range rs[1:] {
		assert.Equal(t, breaker.Closed, r.state(t).State)
		assert.Zero(t, r.link.Stats().Received)
	}
	rs[3].payments(t).Breaker().Trip(breaker.Manual) // the second vote
	for _, r := range rs[1:3] {
		eventually(t, 2*time.Second, r.name+" opens on the quorum", func() bool { return r.state(t).State == breaker.Open })
		assert.Equal(t, breaker.Remote, r.state(t).Reason)
	}
	eventually(t, time.Second, "q3's trip counted as published", func() bool { return rs[3].link.Stats().Published == 1 })
	assert.Zero(t, rs[3].link.Stats().Votes, "q3's trip made the quorum")
}

// Votes older than the window do not count: two trips further apart stay
// local, and the fleet stays closed.
func TestVotesOutsideTheWindowDoNotCount(t *testing.T) {
	srv := startRedis(t)
	rs := startQuorumFleet(t, srv, 3, fleet.Quorum{Replicas: 2, Window: 200 * time.Millisecond})
	rs[0].payments(t).Breaker().Trip(breaker.Saturation)
	eventually(t, time.Second, "q0 votes", func() bool { return rs[0].link.Stats().Votes == 1 })
	time.Sleep(300 * time.Millisecond) // the window passes: q0's vote expires in Redis
	rs[1].payments(t).Breaker().Trip(breaker.Saturation)
	eventually(t, time.Second, "q1 votes", func() bool { return rs[1].link.Stats().Votes == 1 })
	// Neither vote opened the fleet: no key, no message.
	assert.Zero(t, srv.client(t).Exists(context.Background(), "{shop}:open:payments").Val())
	assert.Equal(t, breaker.Closed, rs[2].state(t).State, "no quorum: the fleet stays closed")
	assert.Zero(t, rs[2].link.Stats().Received)
}
