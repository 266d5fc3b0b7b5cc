package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
)

// controlHeaders are what the page sends with an action.
var controlHeaders = map[string]string{"Content-Type": "application/json", dashboard.ControlHeader: "1", "Host": "127.0.0.1:9090"}

func with(h map[string]string, k, v string) map[string]string {
	m := map[string]string{}
	for a, b := range h {
		m[a] = b
	}
	if v == "" {
		delete(m, k)
	} else {
		m[k] = v
	}
	return m
}

func TestControlActionsChangeTheBreaker(t *testing.T) {
	g := newGroup(t, "payments")
	h := newHandler(t, dashboard.Options{AllowControl: true})
	h.AddGroup(g)
	ex, _ := g.Executor("payments")
	for _, tc := range []struct{ action, want string }{
		{"trip", "open"},
		{"reset", "closed"},
		{"force-open", "forced-open"},
		{"reset", "closed"},
	} {
		t.Run(tc.action+" makes the breaker "+tc.want, func(t *testing.T) {
			w := do(h, http.MethodPost, "/api/control", `{"supplier":"payments","action":"`+tc.action+`"}`, controlHeaders)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			assert.JSONEq(t, `{"supplier":"payments","action":"`+tc.action+`","state":"`+tc.want+`"}`, w.Body.String())
			assert.Equal(t, tc.want, ex.Breaker().State().String())
		})
	}
	assert.True(t, snapshot(t, h).Control)
}

func TestControlRefusesUnsafeRequests(t *testing.T) {
	body := `{"supplier":"payments","action":"trip"}`
	for _, tc := range []struct {
		name    string
		control bool
		method  string
		body    string
		header  map[string]string
		code    int
		says    string
	}{
		{"it is off by default", false, http.MethodPost, body, controlHeaders, http.StatusForbidden, "AllowControl"},
		{"a GET never acts", true, http.MethodGet, "", controlHeaders, http.StatusMethodNotAllowed, "POST only"},
		{"a PUT never acts", true, http.MethodPut, body, controlHeaders, http.StatusMethodNotAllowed, "POST only"},
		{"a POST without the control header, as a form sends it", true, http.MethodPost, body,
			with(controlHeaders, dashboard.ControlHeader, ""), http.StatusForbidden, dashboard.ControlHeader},
		{"a POST from another origin", true, http.MethodPost, body,
			with(controlHeaders, "Origin", "https://evil.example"), http.StatusForbidden, "origin"},
		{"a POST for a host name of another site's (DNS rebinding: same-origin to the browser)", true, http.MethodPost, body,
			with(with(controlHeaders, "Host", "evil.example:9090"), "Origin", "http://evil.example:9090"), http.StatusForbidden, "Options.ControlHosts"},
		{"a POST a browser marks cross-site", true, http.MethodPost, body,
			with(controlHeaders, "Sec-Fetch-Site", "cross-site"), http.StatusForbidden, "origin"},
		{"a form-encoded POST", true, http.MethodPost, "supplier=payments&action=trip",
			with(controlHeaders, "Content-Type", "application/x-www-form-urlencoded"), http.StatusUnsupportedMediaType, "application/json"},
		{"an unknown action", true, http.MethodPost, `{"supplier":"payments","action":"explode"}`, controlHeaders, http.StatusBadRequest, `"explode"`},
		{"an unknown supplier", true, http.MethodPost, `{"supplier":"nobody","action":"trip"}`, controlHeaders, http.StatusNotFound, `"nobody"`},
		{"an unknown field", true, http.MethodPost, `{"supplier":"payments","action":"trip","force":true}`, controlHeaders, http.StatusBadRequest, "force"},
		{"two objects", true, http.MethodPost, body + body, controlHeaders, http.StatusBadRequest, "one JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup(t, "payments")
			h := newHandler(t, dashboard.Options{AllowControl: tc.control})
			h.AddGroup(g)
			w := do(h, tc.method, "/api/control", tc.body, tc.header)
			assert.Equal(t, tc.code, w.Code)
			assert.Contains(t, w.Body.String(), tc.says)
			ex, _ := g.Executor("payments")
			assert.Equal(t, "closed", ex.Breaker().State().String(), "nothing changed")
		})
	}
}

func TestNoGetChangesAnything(t *testing.T) {
	g := newGroup(t, "payments", "search")
	h := newHandler(t, dashboard.Options{AllowControl: true})
	h.AddGroup(g)
	gens := func() map[string]uint64 {
		m := map[string]uint64{}
		for _, name := range g.Names() {
			ex, _ := g.Lookup(name)
			m[name] = ex.Breaker().Stats().Generation
		}
		return m
	}
	before := gens()
	for _, path := range []string{
		"/", "/index.html", "/app.js", "/api/snapshot", "/api/control",
		"/api/control?supplier=payments&action=trip", "/api/snapshot?supplier=payments&action=force-open",
		"/?action=trip&supplier=payments",
	} {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			do(h, m, path, "", controlHeaders)
		}
	}
	assert.Equal(t, before, gens())
	for _, path := range []string{"/", "/api/snapshot", "/api/events"} {
		w := do(h, http.MethodPost, path, `{"supplier":"payments","action":"trip"}`, controlHeaders)
		assert.Equal(t, http.StatusMethodNotAllowed, w.Code, path)
	}
	assert.Equal(t, before, gens())
}

func TestControlHandsActionsToOptionsControl(t *testing.T) {
	g := newGroup(t, "payments")
	var got []string
	h := newHandler(t, dashboard.Options{AllowControl: true, Control: func(_ context.Context, supplier, action, reason string) error {
		got = append(got, supplier+" "+action+" "+reason)
		if action == "reset" {
			return errors.New("redis down")
		}
		return nil
	}})
	h.AddGroup(g)
	ex, _ := g.Executor("payments")
	w := do(h, http.MethodPost, "/api/control", `{"supplier":"payments","action":"force-open","reason":"INC 42"}`, controlHeaders)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Equal(t, "closed", ex.Breaker().State().String(), "the hook acts, not the handler")
	w = do(h, http.MethodPost, "/api/control", `{"supplier":"payments","action":"reset"}`, controlHeaders)
	assert.Equal(t, http.StatusBadGateway, w.Code)
	assert.Contains(t, w.Body.String(), "redis down")
	assert.Equal(t, []string{"payments force-open INC 42", "payments reset "}, got)
}

// A control request names the dashboard by address, as localhost, or as a
// host the operator listed: a rebinding page can only name its own domain.
func TestControlHosts(t *testing.T) {
	g := newGroup(t, "payments")
	h := newHandler(t, dashboard.Options{AllowControl: true, ControlHosts: []string{"admin.internal"}})
	h.AddGroup(g)
	for _, host := range []string{"127.0.0.1:9090", "[::1]:9090", "localhost:9090", "LOCALHOST", "10.0.0.7", "admin.internal:9090", "Admin.Internal"} {
		w := do(h, http.MethodPost, "/api/control", `{"supplier":"payments","action":"reset"}`, with(controlHeaders, "Host", host))
		assert.Equal(t, http.StatusOK, w.Code, "%s: %s", host, w.Body.String())
	}
	for _, host := range []string{"evil.example", "admin.internal.evil.example:9090", "localhost.evil.example", ""} {
		w := do(h, http.MethodPost, "/api/control", `{"supplier":"payments","action":"trip"}`, with(controlHeaders, "Host", host))
		assert.Equal(t, http.StatusForbidden, w.Code, "%q", host)
	}
	ex, _ := g.Executor("payments")
	assert.Equal(t, "closed", ex.Breaker().State().String(), "no refused request tripped it")
}

// Options.Control is user code: a panic, a Goexit or a hook that ignores
// its context is answered 502, and the handler is not held past
// controlTimeout (the hook's goroutine lives on until it returns).
func TestControlHookCannotCrashOrHoldTheHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, "payments")
		release := make(chan struct{})
		for name, hook := range map[string]func(context.Context, string, string, string) error{
			"a panic":              func(context.Context, string, string, string) error { panic("hook bug") },
			"a Goexit":             func(context.Context, string, string, string) error { runtime.Goexit(); return nil },
			"a hook that hangs on": func(context.Context, string, string, string) error { <-release; return nil },
		} {
			h := newHandler(t, dashboard.Options{AllowControl: true, Control: hook})
			h.AddGroup(g)
			start := time.Now()
			w := do(h, http.MethodPost, "/api/control", `{"supplier":"payments","action":"trip"}`, controlHeaders)
			assert.Equal(t, http.StatusBadGateway, w.Code, name)
			assert.Contains(t, w.Body.String(), "Options.Control", name)
			assert.LessOrEqual(t, time.Since(start), 10*time.Second, name)
		}
		close(release)
	})
}

// A tile's ID is unique on the page even when a suffixed ID is another
// executor's own name: an action on a tile acts on that tile's executor.
func TestIDsAreUniqueWhenANameLooksSuffixed(t *testing.T) {
	alone, err := executor.New("a", executor.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, alone.Close(context.Background())) })
	g := newGroup(t, "a", "a#2")
	h := newHandler(t, dashboard.Options{AllowControl: true})
	h.Add(alone)
	h.AddGroup(g)
	ids := map[string]int{}
	for _, s := range snapshot(t, h).Suppliers {
		ids[s.ID]++
	}
	assert.Equal(t, map[string]int{"a": 1, "a#2": 1, "a#2#2": 1}, ids)
	w := do(h, http.MethodPost, "/api/control", `{"supplier":"a#2","action":"force-open"}`, controlHeaders)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	groupA, _ := g.Lookup("a")
	own, _ := g.Lookup("a#2")
	assert.Equal(t, "forced-open", groupA.Breaker().State().String(), "tile a#2 is the group's a, the second a")
	assert.Equal(t, "closed", own.Breaker().State().String())
	assert.Equal(t, "closed", alone.Breaker().State().String())
}
