package fleet

import "github.com/redis/go-redis/v9"

// ClusterChannel is the channel of supplier's lane when the fleet runs on
// a Redis Cluster, for tests that need to know its shard.
func ClusterChannel(prefix, supplier string) string {
	return newClusterBackend(&redis.ClusterClient{}, prefix, 0, 0).lane(supplier).channel
}
