package fleet_test

import (
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
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled: New fails first
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
			executor.GroupConfig{Dependencies: map[string]executor.Config{"payments": {Breaker: breaker.Config{Name: "pay"}}}},
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
		{"the group's own errors come through", fleet.Config{Client: client, Prefix: "p"},
			executor.GroupConfig{Default: executor.Config{Workers: -1}}, []string{"Workers"}},
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
