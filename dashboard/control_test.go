package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/dashboard"
)

// controlHeaders are what the page sends with an action.
var controlHeaders = map[string]string{"Content-Type": "application/json", dashboard.ControlHeader: "1"}

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
