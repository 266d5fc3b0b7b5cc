package readiness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/readiness"
)

// shop is a group with a critical and a non-critical supplier, and the
// readiness handler on a real server on 127.0.0.1.
type shop struct {
	g        *executor.Group
	payments *executor.Executor // critical
	recs     *executor.Executor // recommendations: not critical
	ready    *readiness.Checker
	url      string
}

// newShop's handler has Details on unless a config edit says otherwise.
func newShop(t *testing.T, edit ...func(*readiness.Config)) *shop {
	t.Helper()
	g, err := executor.NewGroup(executor.GroupConfig{
		Default:      executor.Config{Breaker: breaker.Config{ResetTimeout: time.Hour}},
		MaxSuppliers: 20_000, // TestADetailedBodyIsBounded makes 10,001
		Suppliers: map[string]executor.Config{
			"payments":        {Breaker: breaker.Config{ResetTimeout: time.Hour}},
			"recommendations": {Breaker: breaker.Config{ResetTimeout: time.Hour}},
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close(context.Background())) })
	cfg := readiness.Config{Group: g, Critical: map[string]bool{"payments": true}, Details: true}
	for _, e := range edit {
		e(&cfg)
	}
	ready, err := readiness.New(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(ready) // 127.0.0.1, a free port
	t.Cleanup(srv.Close)
	s := &shop{g: g, ready: ready, url: srv.URL}
	s.payments, _ = g.Lookup("payments")
	s.recs, _ = g.Lookup("recommendations")
	return s
}

// probe asks the readiness endpoint, as a load balancer would.
func (s *shop) probe(t *testing.T) (int, readiness.Report) {
	t.Helper()
	resp, err := http.Get(s.url)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var r readiness.Report
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	return resp.StatusCode, r
}

func states(r readiness.Report) map[string]readiness.State {
	m := map[string]readiness.State{}
	for _, s := range r.Suppliers {
		m[s.Name] = s.State
	}
	return m
}

func TestHandler(t *testing.T) {
	t.Run("every breaker closed: ready, 200", func(t *testing.T) {
		s := newShop(t)
		code, r := s.probe(t)
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, readiness.Ready, r.State)
		require.Len(t, r.Suppliers, 2)
		assert.Equal(t, readiness.SupplierReport{Name: "payments", State: readiness.Ready, Critical: true,
			Breaker: "closed", Reason: "none", Since: r.Suppliers[0].Since}, r.Suppliers[0])
		assert.False(t, r.Suppliers[1].Critical)
	})
	t.Run("a non-critical supplier open: degraded, still 200", func(t *testing.T) {
		s := newShop(t)
		s.recs.Breaker().Trip(breaker.Saturation)
		code, r := s.probe(t)
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, readiness.Degraded, r.State)
		assert.Equal(t, map[string]readiness.State{"payments": readiness.Ready, "recommendations": readiness.Unready}, states(r))
		assert.Equal(t, "open", r.Suppliers[1].Breaker)
		assert.Equal(t, "saturation", r.Suppliers[1].Reason)
	})
	t.Run("a critical supplier open: unready, 503", func(t *testing.T) {
		s := newShop(t)
		s.payments.Breaker().Trip(breaker.Manual)
		code, r := s.probe(t)
		assert.Equal(t, http.StatusServiceUnavailable, code)
		assert.Equal(t, readiness.Unready, r.State)
		s.payments.Breaker().Reset()
		code, _ = s.probe(t)
		assert.Equal(t, http.StatusOK, code, "ready again once it closes")
	})
	t.Run("a critical supplier forced open by an operator: unready; disabled: ready", func(t *testing.T) {
		s := newShop(t)
		s.payments.Breaker().ForceOpen()
		code, _ := s.probe(t)
		assert.Equal(t, http.StatusServiceUnavailable, code)
		s.payments.Breaker().Disable()
		code, r := s.probe(t)
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, readiness.Ready, r.State)
	})
	t.Run("a supplier created after the checker is reported too", func(t *testing.T) {
		s := newShop(t)
		search, err := s.g.Executor("search")
		require.NoError(t, err)
		search.Breaker().Trip(breaker.Manual)
		code, r := s.probe(t)
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, readiness.Degraded, r.State)
		assert.Equal(t, readiness.Unready, states(r)["search"])
	})
}

// A half-open critical supplier is recovering: degraded, not unready.
func TestHalfOpenIsDegraded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := executor.New("payments", executor.Config{InvocationTimeout: time.Second,
			Breaker: breaker.Config{ResetTimeout: 2 * time.Second}})
		require.NoError(t, err)
		defer ex.Close(context.Background())
		ready, err := readiness.New(readiness.Config{Executors: []*executor.Executor{ex}, Critical: map[string]bool{"payments": true}})
		require.NoError(t, err)
		ex.Breaker().Trip(breaker.Manual)
		assert.Equal(t, readiness.Unready, ready.Report().State)
		time.Sleep(2 * time.Second)
		p, err := ex.Breaker().Allow() // the probe: half-open until it ends
		require.NoError(t, err)
		r := ready.Report()
		assert.Equal(t, readiness.Degraded, r.State)
		assert.Equal(t, "half-open", r.Suppliers[0].Breaker)
		p.Done(nil)
		assert.Equal(t, readiness.Ready, ready.Report().State)
	})
}

// An open breaker recovers lazily: it half-opens only when a call comes
// after its reset timeout. A critical supplier's open breaker takes the
// instance out of the load balancer, which then sends it no call, so once
// the probe is due the supplier must read as recovering, or the instance
// would stay unready for good.
func TestAnOpenBreakerWhoseProbeIsDueIsDegraded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := executor.New("payments", executor.Config{InvocationTimeout: time.Second,
			Breaker: breaker.Config{ResetTimeout: 2 * time.Second}})
		require.NoError(t, err)
		defer ex.Close(context.Background())
		ready, err := readiness.New(readiness.Config{Executors: []*executor.Executor{ex}, Critical: map[string]bool{"payments": true}})
		require.NoError(t, err)
		ex.Breaker().Trip(breaker.Manual)
		time.Sleep(time.Second)
		assert.Equal(t, readiness.Unready, ready.Report().State, "open, its probe not due")
		time.Sleep(time.Second)
		r := ready.Report()
		assert.Equal(t, readiness.Degraded, r.State, "no call came, and the probe is due")
		assert.Equal(t, "open", r.Suppliers[0].Breaker)
		w := httptest.NewRecorder()
		ready.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		assert.Equal(t, http.StatusOK, w.Code)
		// The probe fails: open again, unready again for a reset timeout.
		_, err = executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 0, errors.New("still down") })
		require.Error(t, err)
		assert.Equal(t, readiness.Unready, ready.Report().State)
		ex.Breaker().ForceOpen()
		time.Sleep(time.Hour)
		assert.Equal(t, readiness.Unready, ready.Report().State, "forced open has no probe")
	})
}

// A supplier in shadow mode refuses nothing, whatever its breaker says:
// its open breaker must not take the instance out of the load balancer,
// which would refuse every request the shadow rollout meant to serve.
func TestAShadowBreakerNeverMakesTheServiceUnready(t *testing.T) {
	ex, err := executor.New("payments", executor.Config{Shadow: true})
	require.NoError(t, err)
	defer ex.Close(context.Background())
	ready, err := readiness.New(readiness.Config{Executors: []*executor.Executor{ex}, Critical: map[string]bool{"payments": true}})
	require.NoError(t, err)
	ex.Breaker().Trip(breaker.Saturation)
	r := ready.Report()
	assert.Equal(t, readiness.Ready, r.State, "nothing is refused")
	assert.Equal(t, readiness.Ready, r.Suppliers[0].State)
	assert.Equal(t, "open", r.Suppliers[0].Breaker, "the line still shows the shadow breaker")
	w := httptest.NewRecorder()
	ready.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	assert.Equal(t, http.StatusOK, w.Code)
	require.NoError(t, ex.Reconfigure(executor.Config{}))
	assert.Equal(t, readiness.Unready, ready.Report().State, "enforcing, the open breaker counts")
}

func TestConfigValidation(t *testing.T) {
	ex, err := executor.New("payments", executor.Config{})
	require.NoError(t, err)
	defer ex.Close(context.Background())
	g, err := executor.NewGroup(executor.GroupConfig{Suppliers: map[string]executor.Config{"payments": {}}})
	require.NoError(t, err)
	defer g.Close(context.Background())
	tests := []struct {
		name string
		cfg  readiness.Config
		want string
	}{
		{"nothing to report", readiness.Config{}, "Config needs a Group or Executors"},
		{"a nil executor", readiness.Config{Executors: []*executor.Executor{nil}}, "Executors[0] is nil"},
		{"a zero executor", readiness.Config{Executors: []*executor.Executor{{}}}, "Executors[0] is a zero Executor"},
		{"two suppliers of one name", readiness.Config{Group: g, Executors: []*executor.Executor{ex}}, `Executors[0] is named "payments", as another executor is`},
		{"a critical name nobody holds (a typo)", readiness.Config{Group: g, Critical: map[string]bool{"paymnts": true}}, `Critical names "paymnts"`},
		{"a negative cap on the lines", readiness.Config{Group: g, MaxSuppliers: -1}, "Config.MaxSuppliers must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := readiness.New(tt.cfg)
			assert.Nil(t, c)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestCriticalIsCopied(t *testing.T) {
	g, err := executor.NewGroup(executor.GroupConfig{Suppliers: map[string]executor.Config{
		"payments":        {Breaker: breaker.Config{ResetTimeout: time.Hour}},
		"recommendations": {Breaker: breaker.Config{ResetTimeout: time.Hour}},
	}})
	require.NoError(t, err)
	defer g.Close(context.Background())
	critical := map[string]bool{"payments": true}
	ready, err := readiness.New(readiness.Config{Group: g, Critical: critical})
	require.NoError(t, err)
	recs, _ := g.Lookup("recommendations")
	recs.Breaker().Trip(breaker.Manual)
	require.Equal(t, readiness.Degraded, ready.Report().State)

	critical["recommendations"] = true // the caller reuses its map after New
	critical["paymnts"] = true         // a name New would have refused
	r := ready.Report()
	assert.Equal(t, readiness.Degraded, r.State, "the Checker keeps the map New checked")
	for _, s := range r.Suppliers {
		assert.Equal(t, s.Name == "payments", s.Critical, s.Name)
	}
}

// A nil Checker checks nothing, as a zero one: ready, no suppliers, no
// panic in a handler that a probe calls every few seconds.
func TestANilCheckerChecksNothing(t *testing.T) {
	var c *readiness.Checker
	var r readiness.Report
	require.NotPanics(t, func() { r = c.Report() })
	assert.Equal(t, readiness.Ready, r.State)
	assert.Empty(t, r.Suppliers)
	w := httptest.NewRecorder()
	require.NotPanics(t, func() { c.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/ready", nil)) })
	assert.Equal(t, http.StatusOK, w.Code)
}

// get returns the status and the body of a GET of url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// By default the body is the service's state alone: a probe that clients
// or other tenants reach learns no supplier's name or state from it.
func TestTheDefaultBodyIsTheStateAlone(t *testing.T) {
	s := newShop(t, func(c *readiness.Config) { c.Details = false })
	code, body := get(t, s.url)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, `{"state":"ready"}`+"\n", body)
	s.recs.Breaker().Trip(breaker.Saturation)
	code, body = get(t, s.url)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, `{"state":"degraded"}`+"\n", body)
	s.payments.Breaker().Trip(breaker.Manual)
	code, body = get(t, s.url)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, `{"state":"unready"}`+"\n", body)
	assert.NotContains(t, body, "payments")
}

// A detailed body lists at most MaxSuppliers suppliers, the least ready
// first kept, and says how many it left out.
func TestADetailedBodyIsBounded(t *testing.T) {
	s := newShop(t)
	for i := range 9999 { // 10,001 suppliers in all
		_, err := s.g.Executor(fmt.Sprintf("hook-%05d.tenant.example", i))
		require.NoError(t, err)
	}
	for _, n := range []string{"hook-09998.tenant.example", "hook-00042.tenant.example"} {
		ex, ok := s.g.Lookup(n)
		require.True(t, ok)
		ex.Breaker().Trip(breaker.Manual)
	}
	s.payments.Breaker().Trip(breaker.Manual)
	code, body := get(t, s.url)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Less(t, len(body), 32<<10, "the body, in bytes")
	var r readiness.Report
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	require.Len(t, r.Suppliers, 100)
	assert.Equal(t, 10001-100, r.Omitted)
	assert.Equal(t, readiness.Unready, r.State)
	st := states(r)
	for _, n := range []string{"payments", "hook-09998.tenant.example", "hook-00042.tenant.example"} {
		assert.Equal(t, readiness.Unready, st[n], "%s: the unready are kept", n)
	}
	assert.True(t, slices.IsSortedFunc(r.Suppliers, func(a, b readiness.SupplierReport) int { return strings.Compare(a.Name, b.Name) }), "sorted by name")
	assert.Len(t, s.ready.Report().Suppliers, 10001, "Report itself leaves none out")

	small := newShop(t, func(c *readiness.Config) { c.MaxSuppliers = 1 })
	small.recs.Breaker().Trip(breaker.Manual)
	_, body = get(t, small.url)
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	require.Len(t, r.Suppliers, 1)
	assert.Equal(t, "recommendations", r.Suppliers[0].Name)
	assert.Equal(t, 1, r.Omitted)
}
