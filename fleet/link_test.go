package fleet_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fleet"
)

// unreachable is a link whose Redis never answers (nothing listens on
// port 1): the group must work alone.
func unreachable(t *testing.T, g executor.GroupConfig) *fleet.Link {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 50 * time.Millisecond, MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	l, err := fleet.New(fleet.Config{Client: c, Prefix: "p", Replica: "alone", Logger: testLogger,
		BackoffMin: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond}, g)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

func TestListenersStillHearTheirEvents(t *testing.T) {
	var group, dep atomic.Int64
	g := groupConfig()
	g.OnTransition = func(breaker.Event) { group.Add(1) }
	g.Suppliers = map[string]executor.Config{"search": {Breaker: breaker.Config{OnTransition: func(breaker.Event) { dep.Add(1) }}}}
	l := unreachable(t, g)
	for _, name := range []string{"payments", "search"} {
		ex, err := l.Group().Executor(name)
		require.NoError(t, err)
		ex.Breaker().Trip(breaker.Manual)
	}
	assert.Equal(t, int64(1), group.Load(), "the group's listener")
	assert.Equal(t, int64(1), dep.Load(), "the supplier's own listener")
	eventually(t, patience, "both trips reach the publisher", func() bool { return l.Stats().Unsent == 2 })
}

func TestAStrictGroupSetsUnknownSuppliersAside(t *testing.T) {
	srv := startRedis(t)
	g := groupConfig()
	g.Strict = true
	g.Suppliers = map[string]executor.Config{"payments": {}}
	cfg := linkConfig(srv, t, "strict")
	l, err := fleet.New(cfg, g)
	require.NoError(t, err)
	defer l.Close(context.Background())
	eventually(t, patience, "link up", func() bool { return l.Stats().Up })
	raw := srv.client(t)
	msg := `{"v":1,"replica":"x","supplier":"elsewhere","kind":"open","reason":"manual","age_ns":0,"probe_in_ns":1000000000}`
	require.NoError(t, raw.Publish(context.Background(), "{shop}:events", msg).Err())
	eventually(t, patience, "the message is set aside", func() bool { return l.Stats().Stale == 1 })
	assert.Equal(t, []string{"payments"}, l.Group().Names())
}

func TestCollector(t *testing.T) {
	l := unreachable(t, groupConfig())
	eventually(t, patience, "the link reports its error", func() bool { return l.Stats().LastError != "" })
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(fleet.NewCollector(l, "")))
	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]int{}
	for _, f := range families {
		got[f.GetName()] = len(f.GetMetric())
		if f.GetName() == "fusebox_fleet_link_up" {
			m := f.GetMetric()[0]
			assert.Equal(t, 0.0, m.GetGauge().GetValue())
			assert.Equal(t, "alone", m.GetLabel()[0].GetValue())
		}
	}
	assert.Equal(t, map[string]int{
		"fusebox_fleet_link_up": 1, "fusebox_fleet_link_sessions_total": 1, "fusebox_fleet_link_downs_total": 1,
		"fusebox_fleet_messages_total": 17, "fusebox_fleet_leases_total": 4,
	}, got)
}

// unchecked hides a collector's descriptors, as a collector that
// describes nothing does: the registry then takes it unchecked, and only a
// scrape reaches its Collect.
type unchecked struct{ prometheus.Collector }

func (unchecked) Describe(chan<- *prometheus.Desc) {}

// A collector that cannot report anything is refused by Register and by
// every scrape, naming the mistake. Before, NewCollector of a nil link
// panicked, and a zero Collector panicked in Register.
func TestCollectorsThatCannotReportAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    func() prometheus.Collector
		want string
	}{
		{"a nil link", func() prometheus.Collector { return fleet.NewCollector(nil, "") }, "NewCollector on a nil or zero *Link (make it with fleet.New)"},
		{"a zero link", func() prometheus.Collector { return fleet.NewCollector(&fleet.Link{}, "") }, "NewCollector on a nil or zero *Link (make it with fleet.New)"},
		{"a zero Collector", func() prometheus.Collector { return &fleet.Collector{} }, "zero *Collector (make it with fleet.NewCollector)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c()
			assert.ErrorContains(t, prometheus.NewPedanticRegistry().Register(c), tc.want)
			reg := prometheus.NewRegistry()
			require.NoError(t, reg.Register(unchecked{c}))
			_, err := reg.Gather()
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// A Link that New did not make has no group, no Redis and no goroutines:
// each method says so instead of panicking (Close with "close of nil
// channel", the others with a nil dereference).
func TestALinkNewDidNotMakeIsAnError(t *testing.T) {
	ctx := context.Background()
	for name, l := range map[string]*fleet.Link{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			const want = "on a nil or zero *Link (make it with fleet.New)"
			assert.ErrorContains(t, l.Close(ctx), "Close "+want)
			assert.ErrorContains(t, l.Control(ctx, "payments", "trip", ""), "Control "+want)
			assert.ErrorContains(t, l.ForceOpen(ctx, "payments", ""), "ForceOpen "+want)
			assert.ErrorContains(t, l.Disable(ctx, "payments", ""), "Disable "+want)
			assert.ErrorContains(t, l.Reset(ctx, "payments", ""), "Reset "+want)
			_, err := l.View(ctx, "payments")
			assert.ErrorContains(t, err, "View "+want)
			_, err = l.FleetView(ctx, "payments")
			assert.ErrorContains(t, err, "View "+want)
			s := l.Stats()
			assert.False(t, s.Up)
			assert.Contains(t, s.LastError, "Stats "+want)

			w := httptest.NewRecorder()
			fleet.ViewHandler(l).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/?supplier=payments", nil))
			assert.Equal(t, http.StatusInternalServerError, w.Code)
			assert.Contains(t, w.Body.String(), "ViewHandler "+want)
		})
	}
	t.Run("a nil context", func(t *testing.T) {
		l := unreachable(t, groupConfig())
		//lint:ignore SA1012 a nil context is what this test is about
		assert.ErrorContains(t, l.Control(nil, "payments", "trip", ""), "Control with a nil context") //nolint:staticcheck
		//lint:ignore SA1012 a nil context is what this test is about
		assert.ErrorContains(t, l.Close(nil), "Close with a nil context") //nolint:staticcheck
		require.NoError(t, l.Close(ctx), "it did nothing")
	})
}

// openWrites is a go-redis hook that counts the commands writing an open
// key: the announces of a link's trips.
type openWrites struct{ n atomic.Int64 }

func (w *openWrites) DialHook(next redis.DialHook) redis.DialHook { return next }
func (w *openWrites) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}

func (w *openWrites) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if args := c.Args(); c.Name() == "set" && len(args) > 1 && strings.HasPrefix(fmt.Sprint(args[1]), "{shop}:open:") {
				w.n.Add(1)
				break
			}
		}
		return next(ctx, cmds)
	}
}

// A reconnection's catch-up writes this replica's open breakers again, in
// pipelines of up to 500, each waiting its timeout on a Redis that takes
// the subscription but does not answer writes (CLIENT PAUSE WRITE). Close
// waits for the pipeline in progress only: the catch-up looks at Close's
// stop before each, and sends nothing more.
func TestCloseDuringACatchUpWaitsForOneWriteOnly(t *testing.T) {
	srv := startRedis(t)
	cfg := linkConfig(srv, t, "r0")
	writes := &openWrites{}
	cfg.Client.(*redis.Client).AddHook(writes)
	l, err := fleet.New(cfg, groupConfig())
	require.NoError(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = l.Close(context.Background())
		}
	})
	eventually(t, patience, "link up", func() bool { return l.Stats().Up })
	const n = 40
	for i := range n {
		ex, err := l.Group().Executor(fmt.Sprintf("s%d", i))
		require.NoError(t, err)
		ex.Breaker().Trip(breaker.Manual) // open for the reset timeout: through the catch-up
	}
	eventually(t, patience, "the trips are published", func() bool { return l.Stats().Published == n })
	before := writes.n.Load()
	raw := srv.client(t)
	require.NoError(t, raw.Do(context.Background(), "CLIENT", "PAUSE", "20000", "WRITE").Err())
	t.Cleanup(func() { raw.Do(context.Background(), "CLIENT", "UNPAUSE") })
	require.NoError(t, raw.Do(context.Background(), "CLIENT", "KILL", "TYPE", "pubsub").Err())
	eventually(t, patience, "the catch-up's first write", func() bool { return writes.n.Load() > before })
	require.NoError(t, l.Close(context.Background()))
	closed = true
	assert.LessOrEqual(t, writes.n.Load()-before, int64(1), "the catch-up went on writing after Close")
}
