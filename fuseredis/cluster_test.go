package fuseredis_test

import (
	"context"
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
	"github.com/fusebox-go/fusebox/fuseredis"
)

// startCluster starts a Redis Cluster of three masters, each with a third
// of the slots, and waits (at most 15 s) until every node says it is ok.
func startCluster(t *testing.T) []*server {
	t.Helper()
	var nodes []*server
	var bus []int // the cluster bus ports
	for range 3 {
		bus = append(bus, freePort(t))
		nodes = append(nodes, startRedis(t, "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-port", strconv.Itoa(bus[len(bus)-1]),
			"--cluster-node-timeout", "60000"))
	}
	ctx := context.Background()
	ranges := [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	for i, n := range nodes {
		c := n.plain(t)
		require.NoError(t, c.Do(ctx, "cluster", "addslotsrange", ranges[i][0], ranges[i][1]).Err())
		if i > 0 {
			require.NoError(t, nodes[0].plain(t).Do(ctx, "cluster", "meet", "127.0.0.1", n.port, bus[i]).Err())
		}
	}
	for _, n := range nodes {
		c := n.plain(t)
		eventually(t, 15*time.Second, "the cluster is ok on "+n.addr(), func() bool {
			info, err := c.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:3") {
				return false
			}
			slots, err := c.ClusterSlots(ctx).Result()
			return err == nil && len(slots) == 3
		})
	}
	return nodes
}

// keyOn returns a key whose slot the node serves.
func keyOn(t *testing.T, nodes []*server, i int) string {
	ranges := [][2]int64{{0, 5460}, {5461, 10922}, {10923, 16383}}
	c := nodes[0].plain(t)
	for k := 0; k < 1000; k++ {
		key := fmt.Sprintf("key%d", k)
		slot, err := c.ClusterKeySlot(context.Background(), key).Result()
		require.NoError(t, err)
		if slot >= ranges[i][0] && slot <= ranges[i][1] {
			return key
		}
	}
	t.Fatalf("no key for node %d", i)
	return ""
}

// TestClusterNodeTripsAlone gives every node of a ClusterClient its own
// hook (OnNewNode) and stops one master: its breaker opens on its stuck
// slots, the keys of the other masters are served throughout, and the
// breaker closes once the node is back.
func TestClusterNodeTripsAlone(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t)
	g, rec := testGroup(t)
	var hooked atomic.Int32
	cluster := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:       []string{nodes[0].addr()},
		DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
		ContextTimeoutEnabled: true, PoolSize: 8,
	})
	t.Cleanup(func() { _ = cluster.Close() })
	cluster.OnNewNode(func(node *redis.Client) {
		hooked.Add(1)
		node.AddHook(fuseredis.New(g, node.Options().Addr))
	})
	ctx := context.Background()
	sick, well := keyOn(t, nodes, 1), keyOn(t, nodes, 2)
	for range 40 {
		require.NoError(t, cluster.Set(ctx, sick, "v", 0).Err())
		require.NoError(t, cluster.Set(ctx, well, "v", 0).Err())
	}
	require.NoError(t, cluster.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error { return c.Ping(ctx).Err() }))
	for _, n := range nodes {
		_, ok := g.Lookup(n.addr())
		assert.True(t, ok, "node %s has its own supplier (names: %v)", n.addr(), g.Names())
	}

	start := time.Now()
	nodes[1].freeze()
	var sickOK, wellOK, wellFailed atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{}, 10)
	loop := func(key string, ok, failed *atomic.Int64) {
		defer func() { done <- struct{}{} }()
		// A GET every 2 ms (or as soon as the last returned), bounded: the
		// test stops the loops long before 15,000.
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for range 15000 {
			if err := cluster.Get(ctx, key).Err(); err == nil {
				ok.Add(1)
			} else if failed != nil {
				failed.Add(1)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}
	for range 8 {
		go loop(sick, &sickOK, nil)
	}
	go loop(well, &wellOK, &wellFailed)
	eventually(t, 10*time.Second, "the stopped master's breaker opens", func() bool {
		_, ok := firstTransition(rec.Events(), nodes[1].addr(), breaker.Open)
		return ok
	})
	trip, _ := firstTransition(rec.Events(), nodes[1].addr(), breaker.Open)
	took := trip.Time.Sub(start)
	t.Logf("%s: opened %v after SIGSTOP (%s)", nodes[1].addr(), took.Round(time.Millisecond), trip.Reason)
	assert.Equal(t, breaker.Saturation, trip.Reason)
	assert.GreaterOrEqual(t, took, 490*time.Millisecond)
	assert.LessOrEqual(t, took, 2*time.Second)
	err := cluster.Get(ctx, sick).Err()
	require.ErrorIs(t, err, breaker.ErrOpen)
	assert.Contains(t, err.Error(), nodes[1].addr())
	served := wellOK.Load()
	eventually(t, 5*time.Second, "the other masters are served", func() bool { return wellOK.Load() >= served+20 })

	nodes[1].thaw()
	close(stop)
	for range 9 {
		<-done
	}
	assert.Zero(t, wellFailed.Load(), "the other master's keys never failed")
	assert.Empty(t, transitionsOf(rec.Events(), nodes[0].addr()))
	assert.Empty(t, transitionsOf(rec.Events(), nodes[2].addr()))
	eventually(t, 10*time.Second, "every slot of the stopped master is back", func() bool {
		return stats(t, g, nodes[1].addr()).InUse == 0
	})
	eventually(t, 15*time.Second, "its breaker closes", func() bool {
		_ = cluster.Get(ctx, sick).Err()
		return stats(t, g, nodes[1].addr()).Breaker.State == breaker.Closed
	})
	require.NoError(t, cluster.Get(ctx, sick).Err())
	for _, n := range nodes {
		assert.Zero(t, stats(t, g, n.addr()).InUse)
	}
}
