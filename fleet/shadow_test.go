package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// A supplier in shadow mode refuses nothing: its breaker's verdicts are a
// trial of its settings. A replica must not make them fleet-wide, where
// they would open the enforcing breakers of the other replicas (a canary
// trying new settings in shadow mode beside a fleet that enforces).
func TestAShadowTripStaysLocal(t *testing.T) {
	srv := startRedis(t)
	canary := startConfigured(t, srv, "canary", nil, func(g *executor.GroupConfig) {
		shadow := g.Default
		shadow.Shadow = true
		g.Suppliers = map[string]executor.Config{"payments": shadow, "orders": g.Default}
	})
	enforcing := startReplica(t, srv, "r1")
	canary.payments(t).Breaker().Trip(breaker.Saturation)
	orders, err := canary.link.Group().Executor("orders")
	require.NoError(t, err)
	orders.Breaker().Trip(breaker.Saturation) // enforced: published, after the shadow trip
	eventually(t, patience, "the enforcing replica hears of the orders trip", func() bool {
		ex, err := enforcing.link.Group().Executor("orders")
		require.NoError(t, err)
		return ex.Breaker().State() == breaker.Open
	})
	assert.Equal(t, breaker.Closed, enforcing.state(t).State, "payments: the canary's shadow verdict stays local")
	// The sender counts a message once Redis took it, which may be after
	// the receiver applied it.
	eventually(t, patience, "the canary counts what it published", func() bool { return canary.link.Stats().Published > 0 })
	assert.Equal(t, uint64(1), canary.link.Stats().Published, "orders' trip alone")

	// The enforcing replica's trip reaches the canary's shadow breaker, but
	// the canary takes no part in the fleet's probe: it would publish no
	// verdict, and the fleet would wait a lease for one.
	orders.Breaker().Reset() // before its probe is due: the canary's rounds for it end
	canary.payments(t).Breaker().Reset()
	before := canary.link.Stats()
	enforcing.payments(t).Breaker().Trip(breaker.Saturation)
	eventually(t, patience, "the canary hears of the trip", func() bool {
		s := canary.state(t)
		return s.State == breaker.Open && s.Reason == breaker.Remote
	})
	eventually(t, patience, "the enforcing replica probes and closes", func() bool {
		_, _ = executor.Do(context.Background(), enforcing.payments(t), func(context.Context) (int, error) { return 0, nil })
		return enforcing.state(t).State == breaker.Closed
	})
	st := canary.link.Stats()
	assert.Equal(t, before.LeasesWon+before.LeasesLost, st.LeasesWon+st.LeasesLost, "the canary never contended for payments' probe lease")
}

// A link that reconnects writes its own open breakers again, for a Redis
// that restarted empty: a shadow breaker's verdict is not among them.
func TestAShadowTripIsNotReassertedAtReconnect(t *testing.T) {
	srv := startRedis(t)
	canary := startConfigured(t, srv, "canary", nil, func(g *executor.GroupConfig) {
		shadow := g.Default
		shadow.Shadow = true
		shadow.Breaker.ResetTimeout = time.Minute // still open at the reconnect
		g.Suppliers = map[string]executor.Config{"payments": shadow, "orders": g.Default}
	})
	enforcing := startReplica(t, srv, "r1")
	canary.payments(t).Breaker().Trip(breaker.Saturation)
	srv.stop()
	srv.start()
	eventually(t, patience, "both links are up again", func() bool {
		return canary.link.Stats().Sessions >= 2 && canary.link.Stats().Up &&
			enforcing.link.Stats().Sessions >= 2 && enforcing.link.Stats().Up
	})
	orders, err := canary.link.Group().Executor("orders")
	require.NoError(t, err)
	orders.Breaker().Trip(breaker.Saturation) // published after the catch-up
	eventually(t, patience, "the enforcing replica hears of the orders trip", func() bool {
		ex, err := enforcing.link.Group().Executor("orders")
		require.NoError(t, err)
		return ex.Breaker().State() == breaker.Open
	})
	assert.Equal(t, breaker.Closed, enforcing.state(t).State, "payments: the canary's shadow verdict stays local")
}
