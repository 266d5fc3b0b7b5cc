package fleet_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fleet"
)

// A cluster of three masters with a replica each: the master of one
// supplier's shard dies, its replica takes its slots over (a failover
// after the 500 ms node timeout), and the fleet's trips of that supplier
// travel again through the new master, as do those of the other shards.
func TestClusterFailoverToAReplica(t *testing.T) {
	begin := time.Now()
	nodes := startClusterOf(t, 1)
	t.Logf("cluster of six up in %v", time.Since(begin))
	admin := clusterClient(t, nodes)
	master := func(name string) string {
		t.Helper()
		return nodes[shardOf(t, admin, nodes, name)].addr()
	}
	// Two suppliers on different shards; the first one's master dies.
	var moved, other string
	for i := 0; other == "" && i < 200; i++ {
		name := "s" + strconv.Itoa(i)
		switch {
		case moved == "":
			moved = name
		case master(name) != master(moved):
			other = name
		}
	}
	require.NotEmpty(t, other)
	rs := make([]*replica, 3)
	for i := range rs {
		rs[i] = startReplicaWith(t, clusterClient(t, nodes), fmt.Sprintf("r%d", i))
	}
	ex := func(r *replica, name string) *executor.Executor {
		e, err := r.link.Group().Executor(name)
		require.NoError(t, err)
		return e
	}
	for _, r := range rs {
		ex(r, moved)
		ex(r, other)
	}
	opens := func(name string, within time.Duration) {
		t.Helper()
		ex(rs[0], name).Breaker().Trip(breaker.Saturation)
		for _, r := range rs[1:] {
			eventually(t, within, r.name+" opens "+name, func() bool { return ex(r, name).Breaker().State() == breaker.Open })
			assert.Equal(t, breaker.Remote, ex(r, name).Breaker().Stats().Reason)
		}
	}
	opens(moved, patience)
	for _, r := range rs {
		ex(r, moved).Breaker().Reset()
	}

	dead := shardOf(t, admin, nodes, moved)
	killed := time.Now()
	nodes[dead].stop()
	// The replica of the dead master becomes a master and serves its
	// slots: the cluster is whole again.
	survivor := nodes[(dead+1)%len(nodes)].client(t)
	slot, err := survivor.ClusterKeySlot(context.Background(), fleet.ClusterChannel("shop", moved)).Result()
	require.NoError(t, err)
	eventually(t, 10*time.Second, "the replica took the dead master's slots", func() bool {
		info, err := survivor.ClusterInfo(context.Background()).Result()
		if err != nil || !strings.Contains(info, "cluster_state:ok") {
			return false
		}
		slots, err := survivor.ClusterSlots(context.Background()).Result()
		if err != nil {
			return false
		}
		for _, s := range slots {
			if int64(s.Start) <= slot && slot <= int64(s.End) {
				return s.Nodes[0].Addr != nodes[dead].addr()
			}
		}
		return false
	})
	t.Logf("failover in %v", time.Since(killed))
	// Trips of the moved supplier travel again, once each link has
	// found the new master; the other shard's never stopped.
	opens(other, patience)
	ex(rs[0], moved).Breaker().Trip(breaker.Saturation)
	for _, r := range rs[1:] {
		eventually(t, 10*time.Second, r.name+" opens "+moved+" after the failover", func() bool {
			return ex(r, moved).Breaker().State() == breaker.Open
		})
		assert.Equal(t, breaker.Remote, ex(r, moved).Breaker().Stats().Reason)
	}
	t.Logf("trips travel again %v after the master's loss", time.Since(killed))
	for _, r := range rs {
		assert.True(t, r.link.Stats().Up, r.name+" link up")
	}
}
