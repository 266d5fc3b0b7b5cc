package fleet_test

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
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

// startCluster starts a Redis Cluster of three masters (no replicas) on
// 127.0.0.1. A master that dies takes only its slots away: the others
// keep serving theirs (cluster-require-full-coverage no).
func startCluster(t *testing.T) []*server { return startClusterOf(t, 0) }

// startClusterOf starts a cluster of three masters with replicas replicas
// each (the first three nodes are the masters).
func startClusterOf(t *testing.T, replicas int) []*server {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Fatalf("redis-cli is not installed (Debian package redis-tools, a dependency of redis-server): %v", err)
	}
	var nodes []*server
	var addrs []string
	for range 3 * (1 + replicas) {
		// A replica syncs at once (no diskless-sync delay), so that it
		// can take over.
		n := startRedis(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "500", "--cluster-require-full-coverage", "no",
			"--repl-diskless-sync-delay", "0")
		nodes = append(nodes, n)
		addrs = append(addrs, n.addr())
	}
	out, err := exec.Command("redis-cli", append(append([]string{"--cluster", "create"}, addrs...),
		"--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")...).CombinedOutput()
	require.NoError(t, err, string(out))
	for _, n := range nodes {
		c := n.client(t)
		eventually(t, 10*time.Second, n.addr()+" cluster ok", func() bool {
			info, err := c.ClusterInfo(context.Background()).Result()
			return err == nil && strings.Contains(info, "cluster_state:ok")
		})
	}
	// A replica that has not synced with its master cannot replace it.
	for _, n := range nodes[3:] {
		c := n.client(t)
		eventually(t, 10*time.Second, n.addr()+" replica synced", func() bool {
			info, err := c.Info(context.Background(), "replication").Result()
			return err == nil && strings.Contains(info, "master_link_status:up")
		})
	}
	return nodes
}

func clusterClient(t *testing.T, nodes []*server) *redis.ClusterClient {
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.addr())
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, DialTimeout: 200 * time.Millisecond,
		ReadTimeout: opTimeout, WriteTimeout: opTimeout, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// shardOf returns the index of the node whose slots hold supplier's keys.
func shardOf(t *testing.T, c *redis.ClusterClient, nodes []*server, supplier string) int {
	t.Helper()
	ch := fleet.ClusterChannel("shop", supplier)
	slot, err := c.ClusterKeySlot(context.Background(), ch).Result()
	require.NoError(t, err)
	slots, err := c.ClusterSlots(context.Background()).Result()
	require.NoError(t, err)
	for _, s := range slots {
		if int64(s.Start) <= slot && slot <= int64(s.End) {
			for i, n := range nodes {
				if s.Nodes[0].Addr == n.addr() {
					return i
				}
			}
		}
	}
	t.Fatalf("no node holds slot %d", slot)
	return -1
}

// One master of three dies during an incident: trips of suppliers whose
// keys live on the other shards still reach every replica, the supplier
// on the lost shard is protected by each replica alone, and no Submit
// waits for any of it.
func TestClusterLosingOneMaster(t *testing.T) {
	nodes := startCluster(t)
	admin := clusterClient(t, nodes)
	// One supplier on each shard.
	onShard := map[int]string{}
	for i := 0; len(onShard) < 3 && i < 200; i++ {
		name := "s" + strconv.Itoa(i)
		if sh := shardOf(t, admin, nodes, name); onShard[sh] == "" {
			onShard[sh] = name
		}
	}
	require.Len(t, onShard, 3)
	rs := make([]*replica, 3)
	for i := range rs {
		rs[i] = startReplicaWith(t, clusterClient(t, nodes), fmt.Sprintf("r%d", i))
	}
	ex := func(r *replica, name string) *executor.Executor {
		e, err := r.link.Group().Executor(name)
		require.NoError(t, err)
		return e
	}
	opens := func(name string) {
		t.Helper()
		ex(rs[0], name).Breaker().Trip(breaker.Saturation)
		for _, r := range rs[1:] {
			eventually(t, patience, r.name+" opens "+name, func() bool { return ex(r, name).Breaker().State() == breaker.Open })
			assert.Equal(t, breaker.Remote, ex(r, name).Breaker().Stats().Reason)
		}
	}
	lost, kept := onShard[0], []string{onShard[1], onShard[2]}
	for _, r := range rs {
		for _, name := range append(kept, lost) {
			ex(r, name) // every replica has the three suppliers
		}
	}

	// Calls to every supplier throughout; the slowest Submit is measured.
	var slowest atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	healthy := &supplier{}
	healthy.set(true, false)
	for _, r := range rs {
		for _, name := range append(kept, lost) {
			e := ex(r, name)
			wg.Add(1)
			go func() {
				defer wg.Done()
				tick := time.NewTicker(5 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-done:
						return
					case <-tick.C:
					}
					start := time.Now()
					f, err := executor.Submit(context.Background(), e, healthy.call(r.name))
					for d, cur := int64(time.Since(start)), slowest.Load(); d > cur && !slowest.CompareAndSwap(cur, d); cur = slowest.Load() {
					}
					if err == nil {
						_, _ = f.Await(context.Background())
					}
				}
			}()
		}
	}

	// The messages travel by sharded pub/sub on the shards' own channels.
	sh, err := nodes[1].client(t).Do(context.Background(), "PUBSUB", "SHARDCHANNELS").StringSlice()
	require.NoError(t, err)
	assert.NotEmpty(t, sh, "shard channels on the second master")

	nodes[0].stop()
	for _, name := range kept {
		opens(name)
	}
	// The lost shard's supplier: each replica alone.
	ex(rs[1], lost).Breaker().Trip(breaker.Saturation)
	_, err = executor.Submit(context.Background(), ex(rs[1], lost), healthy.call("r1"))
	assert.ErrorIs(t, err, breaker.ErrOpen)
	for _, r := range rs {
		assert.True(t, r.link.Stats().Up, "%s: the link is up on the other shards", r.name)
	}
	close(done)
	wg.Wait()
	t.Logf("the slowest Submit took %v", time.Duration(slowest.Load()))
	assert.Less(t, time.Duration(slowest.Load()), noWait, "no Submit waited for the lost shard")
}
