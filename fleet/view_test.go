package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/fleet"
)

// The view shows every replica's breaker for a supplier and who probes
// next, read from Redis by any replica, and served as JSON beside the
// dashboard.
func TestTheViewShowsEveryReplica(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 3)
	s := &supplier{}
	s.set(false, true) // hung: the probe runs its 200 ms
	stop := traffic(t, rs, s)
	defer stop()
	rs[0].payments(t).Breaker().Trip(breaker.Saturation)
	var v fleet.View
	eventually(t, patience, "the view shows three open breakers", func() bool {
		var err error
		v, err = rs[2].link.View(context.Background(), "payments")
		require.NoError(t, err)
		if len(v.Replicas) != 3 {
			return false
		}
		for _, r := range v.Replicas {
			if r.State != "open" && r.State != "half-open" {
				return false
			}
		}
		return true
	})
	assert.Equal(t, "r0", v.Replicas[0].Replica)
	assert.Equal(t, "saturation", v.Replicas[0].Reason)
	assert.Equal(t, "remote", v.Replicas[1].Reason)
	// Shortly before the probe is due, one replica holds the lease.
	eventually(t, patience, "a prober", func() bool {
		v, _ = rs[1].link.View(context.Background(), "payments")
		return v.Prober != ""
	})
	assert.Contains(t, []string{"r0", "r1", "r2"}, v.Prober)
	assert.Positive(t, v.ProberLeft)

	h := fleet.ViewHandler(rs[1].link)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/?supplier=payments", nil))
	require.Equal(t, http.StatusOK, w.Code)
	var got fleet.View
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
	assert.Equal(t, "payments", got.Supplier)
	assert.Len(t, got.Replicas, 3)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, w.Code)
}

// The dashboard, handed the link's FleetView, serves the fleet's view of a
// supplier for the tile's fleet section: every replica, the prober, and
// the fleet-wide override.
func TestTheDashboardShowsTheFleet(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 2)
	require.NoError(t, rs[0].link.ForceOpen(context.Background(), "payments", "INC-1"))
	dash, err := dashboard.New(dashboard.Options{FleetView: rs[1].link.FleetView})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dash.Close(context.Background()) })
	dash.AddGroup(rs[1].link.Group())
	var got fleet.View
	eventually(t, patience, "the dashboard shows both replicas forced open", func() bool {
		w := httptest.NewRecorder()
		dash.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/fleet?supplier=payments", nil))
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
		n := 0
		for _, r := range got.Replicas {
			if r.State == "forced-open" {
				n++
			}
		}
		return n == 2 && got.Override != nil
	})
	assert.Equal(t, "payments", got.Supplier)
	assert.Equal(t, []string{"r0", "r1"}, []string{got.Replicas[0].Replica, got.Replicas[1].Replica})
	assert.Equal(t, "force-open", got.Override.Action)
	assert.Equal(t, "INC-1", got.Override.Reason)
	assert.Equal(t, "r0", got.Override.Replica)
}

// The reporters of a supplier's view are a set in Redis that anything able
// to write the fleet's keys can fill: the view shows a bounded number of
// replicas, with names and states that could come from a replica, and
// counts the others.
func TestAViewOfAForgedCrowdIsBounded(t *testing.T) {
	srv := startRedis(t)
	rs := startFleet(t, srv, 2)
	rs[0].payments(t).Breaker().Trip(breaker.Saturation)
	eventually(t, patience, "both replicas report", func() bool {
		v, err := rs[1].link.View(context.Background(), "payments")
		require.NoError(t, err)
		return len(v.Replicas) == 2
	})
	raw := srv.client(t)
	ctx := context.Background()
	const forged = 20_000
	// The longest names and reasons a replica can write, and the longest
	// state: the view must still fit the dashboard's 64 KiB.
	state := `{"state":"forced-open","reason":"` + strings.Repeat("r", 64) + `","age_ns":1,"ttl_ns":3600000000000}`
	_, err := raw.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range forged {
			rep := fmt.Sprintf("%064d", i)
			p.SAdd(ctx, "{shop}:reporters:payments", rep)
			p.Set(ctx, "{shop}:state:payments:"+rep, state, time.Hour)
		}
		long := strings.Repeat("x", 10_000)
		p.SAdd(ctx, "{shop}:reporters:payments", long, "bad name")
		p.Set(ctx, "{shop}:state:payments:"+long, state, time.Hour)
		p.Set(ctx, "{shop}:state:payments:bad name", state, time.Hour)
		return nil
	})
	require.NoError(t, err)
	v, err := rs[1].link.View(ctx, "payments")
	require.NoError(t, err)
	assert.LessOrEqual(t, len(v.Replicas), fleet.MaxViewReplicas)
	assert.Equal(t, forged+2+2-len(v.Replicas), v.Omitted, "the others are counted")
	for _, r := range v.Replicas {
		assert.LessOrEqual(t, len(r.Replica), fleet.MaxReplicaLen)
		assert.NotContains(t, r.Replica, " ")
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Less(t, len(b), 64<<10, "the view's JSON: %d bytes", len(b))
}
