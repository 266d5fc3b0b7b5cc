package fleet_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fleet"
)

func TestConfigErrors(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true}) // never dialled: New fails first
	defer client.Close()
	for _, tc := range []struct {
		name string
		cfg  fleet.Config
		g    executor.GroupConfig
		want []string
	}{
		{"a missing client and prefix are named", fleet.Config{}, executor.GroupConfig{},
			[]string{"Config.Client must not be nil", "Config.Prefix must not be empty"}},
		{"a prefix with braces is refused", fleet.Config{Client: client, Prefix: "a}b"}, executor.GroupConfig{},
			[]string{"Config.Prefix"}},
		{"negative durations and a buffer are named", fleet.Config{Client: client, Prefix: "p", Margin: -1, OpTimeout: -1, Buffer: -1},
			executor.GroupConfig{}, []string{"Config.Margin", "Config.OpTimeout", "Config.Buffer"}},
		{"a backoff range upside down is refused", fleet.Config{Client: client, Prefix: "p", BackoffMin: 2e9, BackoffMax: 1e9},
			executor.GroupConfig{}, []string{"BackoffMax (1s) must be ≥ BackoffMin (2s)"}},
		{"a breaker name other than the supplier's is refused", fleet.Config{Client: client, Prefix: "p"},
			executor.GroupConfig{Suppliers: map[string]executor.Config{"payments": {Breaker: breaker.Config{Name: "pay"}}}},
			[]string{`Suppliers["payments"].Breaker.Name`}},
		{"a quorum out of range is named", fleet.Config{Client: client, Prefix: "p", Quorum: fleet.Quorum{Replicas: -2, Window: -1}},
			executor.GroupConfig{}, []string{"Config.Quorum.Replicas", "Config.Quorum.Window"}},
		{"a quorum window under a millisecond is refused", fleet.Config{Client: client, Prefix: "p", Quorum: fleet.Quorum{Replicas: 2, Window: 500 * time.Microsecond}},
			executor.GroupConfig{}, []string{"Config.Quorum.Window must be 0 (10s) or in [1ms, 1h], got 500µs"}},
		{"a share above 1 is named", fleet.Config{Client: client, Prefix: "p", Quorum: fleet.Quorum{Share: 1.5}},
			executor.GroupConfig{}, []string{"Config.Quorum.Share must be in [0, 1], got 1.5"}},
		{"a negative share is named", fleet.Config{Client: client, Prefix: "p", Quorum: fleet.Quorum{Share: -0.1}},
			executor.GroupConfig{}, []string{"Config.Quorum.Share must be in [0, 1], got -0.1"}},
		{"a share that is not a number is named", fleet.Config{Client: client, Prefix: "p", Quorum: fleet.Quorum{Share: math.NaN()}},
			executor.GroupConfig{}, []string{"Config.Quorum.Share must be in [0, 1], got NaN"}},
		{"three keys, and a short one, are named", fleet.Config{Client: client, Prefix: "p",
			Keys: [][]byte{[]byte("0123456789abcdef"), []byte("short"), []byte("0123456789abcdef")}},
			executor.GroupConfig{}, []string{"Config.Keys must hold at most 2 keys", "Config.Keys[1] must be at least 16 bytes"}},
		{"a trip rate that is not a number and a negative burst are named", fleet.Config{Client: client, Prefix: "p",
			TripRate: math.NaN(), TripBurst: -1},
			executor.GroupConfig{}, []string{"Config.TripRate must be in [0, 1e6]", "Config.TripBurst must be in [0, 1e6], got -1"}},
		{"the group's own errors come through", fleet.Config{Client: client, Prefix: "p"},
			executor.GroupConfig{Default: executor.Config{Slots: -1}}, []string{"Slots"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := fleet.New(tc.cfg, tc.g)
			require.Error(t, err)
			assert.Nil(t, l)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// The link's commands must end at Config.OpTimeout: go-redis honours a
// context's deadline on the socket only with ContextTimeoutEnabled, and
// otherwise waits its ReadTimeout (3 s by default) on a Redis that hangs.
// New refuses a client of go-redis that bounds its commands neither way,
// naming the field and the fix; either way is accepted.
func TestConfigClientMustBoundItsCommands(t *testing.T) {
	const addr = "127.0.0.1:1" // nothing listens there
	plain := func(o redis.Options) redis.UniversalClient { o.Addr = addr; return redis.NewClient(&o) }
	failover := func(o redis.FailoverOptions) redis.UniversalClient {
		o.MasterName, o.SentinelAddrs = "mymaster", []string{addr}
		return redis.NewFailoverClient(&o)
	}
	cluster := func(o redis.ClusterOptions) redis.UniversalClient {
		o.Addrs = []string{addr}
		return redis.NewClusterClient(&o)
	}
	for _, tc := range []struct {
		name   string
		client redis.UniversalClient
		op     time.Duration
		want   string // "" if accepted
	}{
		{"go-redis's defaults are refused", plain(redis.Options{}), 0, "ReadTimeout 3s and WriteTimeout 3s"},
		{"no read timeout (-1) is refused", plain(redis.Options{ReadTimeout: -1, WriteTimeout: 100 * time.Millisecond}), 0, "ReadTimeout none"},
		{"no write deadline (-2) is refused", plain(redis.Options{ReadTimeout: 100 * time.Millisecond, WriteTimeout: -2}), 0, "WriteTimeout none"},
		{"timeouts above OpTimeout are refused", plain(redis.Options{ReadTimeout: time.Second, WriteTimeout: time.Second}), 0, "within Config.OpTimeout (500ms)"},
		{"a failover client is checked", failover(redis.FailoverOptions{}), 0, "ReadTimeout 3s"},
		{"a cluster client is checked", cluster(redis.ClusterOptions{}), 0, "ReadTimeout 3s"},
		{"ContextTimeoutEnabled is accepted", plain(redis.Options{ContextTimeoutEnabled: true, ReadTimeout: -1}), 0, ""},
		{"ContextTimeoutEnabled with no deadline at all (-2) is refused", plain(redis.Options{ContextTimeoutEnabled: true, ReadTimeout: -2}), 0, "of -2 sets no deadline"},
		{"a cluster client's -2 is refused too", cluster(redis.ClusterOptions{ContextTimeoutEnabled: true, WriteTimeout: -2}), 0, "of -2 sets no deadline"},
		{"a write timeout that follows the read timeout is accepted", plain(redis.Options{ReadTimeout: 200 * time.Millisecond}), 0, ""},
		{"the 3 s default under an OpTimeout of 3 s is accepted", plain(redis.Options{}), 3 * time.Second, ""},
		{"a failover client with ContextTimeoutEnabled is accepted", failover(redis.FailoverOptions{ContextTimeoutEnabled: true}), 0, ""},
		{"a cluster client with ContextTimeoutEnabled is accepted", cluster(redis.ClusterOptions{ContextTimeoutEnabled: true}), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.client.Close()
			l, err := fleet.New(fleet.Config{Client: tc.client, Prefix: "p", OpTimeout: tc.op, Logger: testLogger}, executor.GroupConfig{})
			if tc.want == "" {
				require.NoError(t, err)
				require.NoError(t, l.Close(context.Background()))
				return
			}
			require.Error(t, err)
			assert.Nil(t, l)
			for _, w := range []string{"Config.Client", "ContextTimeoutEnabled: true", tc.want} {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}
