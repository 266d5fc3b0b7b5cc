package fleet_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fleet"
)

// everyReplica waits until every replica's breaker is in state with the
// fleet's action for payments known as action.
func everyReplica(t *testing.T, rs []*replica, state breaker.State, action, reason string) {
	t.Helper()
	for _, r := range rs {
		eventually(t, patience, r.name+" is "+state.String(), func() bool {
			o := r.link.Overrides()["payments"]
			return r.state(t).State == state && o.Action == action && o.Applied
		})
		assert.Equal(t, reason, r.link.Overrides()["payments"].Reason, r.name)
	}
}

func TestOperatorActionsReachEveryReplica(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 3)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		act    func(*fleet.Link) error
		state  breaker.State
		action string
		reason string
	}{
		{"force open refuses everywhere", func(l *fleet.Link) error { return l.ForceOpen(ctx, "payments", "INC-42") }, breaker.ForcedOpen, "force-open", "INC-42"},
		{"disable admits everywhere", func(l *fleet.Link) error { return l.Disable(ctx, "payments", "breaker-misfires") }, breaker.Disabled, "disable", "breaker-misfires"},
		{"reset closes everywhere", func(l *fleet.Link) error { return l.Reset(ctx, "payments", "INC-42-fixed") }, breaker.Closed, "reset", "INC-42-fixed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, tc.act(rs[1].link))
			everyReplica(t, rs, tc.state, tc.action, tc.reason)
			// A replica that joins later learns it from the override key.
			late := startReplica(t, srv, "late-"+tc.action)
			everyReplica(t, []*replica{late}, tc.state, tc.action, tc.reason)
			assert.Equal(t, rs[1].link.Overrides()["payments"].Seq, late.link.Overrides()["payments"].Seq)
		})
	}
	for _, r := range rs {
		assert.Zero(t, r.link.Stats().Published, "%s published no trip or close of its own", r.name)
	}
}

func TestAForcedOpenFleetIgnoresTripsAndCloses(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 2)
	ctx := context.Background()
	require.NoError(t, rs[0].link.ForceOpen(ctx, "payments", "maintenance"))
	everyReplica(t, rs, breaker.ForcedOpen, "force-open", "maintenance")
	// A local Reset on one replica is local: it closes there and publishes
	// nothing that would end the other's override.
	rs[1].payments(t).Breaker().Reset()
	rs[1].payments(t).Breaker().Trip(breaker.Manual)
	// Waits as generous as the other tests' (1 s was once too short with
	// every module's tests running at once, under release-check).
	eventually(t, patience, "the trip is published", func() bool { return rs[1].link.Stats().Published >= 1 })
	assert.Equal(t, uint64(1), rs[1].link.Stats().Published, "the trip alone")
	eventually(t, patience, "and set aside", func() bool { return rs[0].link.Stats().Stale >= 1 })
	assert.Equal(t, breaker.ForcedOpen, rs[0].state(t).State, "an operator's override wins")
}

func TestAFleetResetEndsATrip(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 3)
	rs[0].payments(t).Breaker().Trip(breaker.Saturation)
	for _, r := range rs {
		eventually(t, patience, r.name+" opens", func() bool { return r.state(t).State == breaker.Open })
	}
	require.NoError(t, rs[2].link.Reset(context.Background(), "payments", "false-alarm"))
	everyReplica(t, rs, breaker.Closed, "reset", "false-alarm")
	// The trip's open key went with the reset: a late replica stays closed.
	late := startReplica(t, srv, "late")
	everyReplica(t, []*replica{late}, breaker.Closed, "reset", "false-alarm")
	// Once its session is up, the late replica has received everything its
	// catch-up read (the open keys, then the actions), and once the
	// applier has applied or set aside each (a deferred one is counted
	// again when it is), a stale open key would have shown: as a second
	// message received and applied.
	eventually(t, patience, "the catch-up applied", func() bool {
		st := late.link.Stats()
		return st.Sessions >= 1 && st.Received >= 1 && st.Applied+st.Stale >= st.Received
	})
	st := late.link.Stats()
	assert.Equal(t, breaker.Closed, late.state(t).State)
	assert.Equal(t, uint64(1), st.Received, "the catch-up read only the reset")
	assert.Equal(t, uint64(1), st.Applied, "only the reset applied")
}

func TestConcurrentActionsEndTheSameEverywhere(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 3)
	ctx := context.Background()
	for range 5 {
		var wg sync.WaitGroup
		for i, r := range rs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					assert.NoError(t, r.link.ForceOpen(ctx, "payments", "a"))
				} else {
					assert.NoError(t, r.link.Disable(ctx, "payments", "b"))
				}
			}()
		}
		wg.Wait()
		eventually(t, patience, "every replica agrees", func() bool {
			want := rs[0].link.Overrides()["payments"]
			for _, r := range rs {
				o := r.link.Overrides()["payments"]
				if o.Seq != want.Seq || !o.Applied || r.state(t).State != rs[0].state(t).State {
					return false
				}
			}
			return true
		})
	}
}

func TestActionsSurviveARedisRestart(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 2)
	require.NoError(t, rs[0].link.ForceOpen(context.Background(), "payments", "INC-7"))
	everyReplica(t, rs, breaker.ForcedOpen, "force-open", "INC-7")
	srv.stop()
	for _, r := range rs {
		eventually(t, patience, r.name+" link down", func() bool { return !r.link.Stats().Up })
	}
	srv.start() // empty: the replicas write back what they know
	for _, r := range rs {
		eventually(t, patience, r.name+" link up", func() bool { return r.link.Stats().Up })
	}
	late := startReplica(t, srv, "late")
	everyReplica(t, []*replica{late}, breaker.ForcedOpen, "force-open", "INC-7")
	// The counter went no lower: the next action is newer than the restored one.
	require.NoError(t, late.link.Reset(context.Background(), "payments", "done"))
	everyReplica(t, append(rs, late), breaker.Closed, "reset", "done")
}

func TestActionErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("a bad reason is refused and nothing changes", func(t *testing.T) {
		l := unreachable(t, groupConfig())
		err := l.ForceOpen(ctx, "payments", "line\nbreak")
		require.ErrorContains(t, err, "reason")
		assert.Empty(t, l.Group().Names())
	})
	t.Run("a supplier name the wire refuses is refused before Redis", func(t *testing.T) {
		srv := startRedis(t)
		l, err := fleet.New(linkConfig(srv, t, "r0"), groupConfig())
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(ctx) })
		eventually(t, patience, "link up", func() bool { return l.Stats().Up })
		for name, why := range map[string]string{
			strings.Repeat("x", fleet.MaxSupplierLen+1): "257 bytes, at most 256",
			"pay\tments":   "control character",
			"pay\xffments": "not valid UTF-8",
		} {
			for _, act := range []func(context.Context, string, string) error{l.ForceOpen, l.Disable, l.Reset} {
				err := act(ctx, name, "INC-2")
				require.Error(t, err)
				assert.Contains(t, err.Error(), fmt.Sprintf("%q", name))
				assert.Contains(t, err.Error(), why)
			}
		}
		assert.Empty(t, l.Group().Names(), "no executor was made")
		assert.Zero(t, srv.client(t).Exists(ctx, "{shop}:seq", "{shop}:overrides").Val(), "nothing reached Redis")
	})
	t.Run("a strict group refuses a supplier it does not list", func(t *testing.T) {
		g := groupConfig()
		g.Strict, g.Suppliers = true, map[string]executor.Config{"payments": {}}
		l := unreachable(t, g)
		require.Error(t, l.Disable(ctx, "elsewhere", "x"))
	})
	t.Run("with the link down the action applies here and says so", func(t *testing.T) {
		l := unreachable(t, groupConfig())
		err := l.ForceOpen(ctx, "payments", "INC-1")
		require.ErrorContains(t, err, "this replica only")
		ex, _ := l.Group().Lookup("payments")
		assert.Equal(t, breaker.ForcedOpen, ex.Breaker().State())
	})
}

// The dashboard's operator control, handed to the link, acts on the fleet.
func TestTheDashboardsControlActsOnTheFleet(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 2)
	dash, err := dashboard.New(dashboard.Options{AllowControl: true, Control: rs[0].link.Control, Logger: testLogger})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dash.Close(context.Background()) })
	dash.AddGroup(rs[0].link.Group())
	post := func(body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/api/control", strings.NewReader(body))
		req.Host = "127.0.0.1:9090" // the dashboard's control takes a host by address
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(dashboard.ControlHeader, "1")
		w := httptest.NewRecorder()
		dash.ServeHTTP(w, req)
		return w
	}
	w := post(`{"supplier":"payments","action":"force-open","reason":"INC 9: payments double-charge"}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	everyReplica(t, rs, breaker.ForcedOpen, "force-open", "INC 9: payments double-charge")
	w = post(`{"supplier":"payments","action":"reset"}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	everyReplica(t, rs, breaker.Closed, "reset", "dashboard")
}
