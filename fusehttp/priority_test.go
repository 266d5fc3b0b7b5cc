package fusehttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
	"github.com/fusebox-go/fusebox/priority"
)

// headerSeen is a Base that records the header each request arrives with.
type headerSeen struct{ got http.Header }

func (h *headerSeen) RoundTrip(r *http.Request) (*http.Response, error) {
	h.got = r.Header
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
}

func TestPriorityTravelsWithTheRequest(t *testing.T) {
	cases := []struct {
		name   string
		header string // Transport.PriorityHeader
		p      priority.Priority
		want   map[string]string // header → value; "" for absent
	}{
		{"a critical request says so", "", priority.Critical, map[string]string{"Fusebox-Priority": "critical"}},
		{"a sheddable one too", "", priority.Sheddable, map[string]string{"Fusebox-Priority": "sheddable"}},
		{"a default one sends nothing", "", priority.Default, map[string]string{"Fusebox-Priority": ""}},
		{"under a name of one's own", "x-criticality", priority.Critical, map[string]string{"X-Criticality": "critical", "Fusebox-Priority": ""}},
		{"or none at all", "-", priority.Critical, map[string]string{"Fusebox-Priority": ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{})
			base := &headerSeen{}
			tr := &fusehttp.Transport{Group: g, Base: base, PriorityHeader: tc.header}
			ctx := priority.With(context.Background(), tc.p)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://shop/", nil)
			require.NoError(t, err)
			req.Header.Set("Accept", "text/plain")
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
			for k, v := range tc.want {
				assert.Equal(t, v, base.got.Get(k), k)
			}
			assert.Equal(t, "text/plain", base.got.Get("Accept"), "the caller's headers go along")
			assert.Len(t, req.Header, 1, "the caller's request is not modified")
		})
	}
}

// The server receives the request's priority once, whatever the caller's
// header said under its name: the same value, another, one twice, or one
// set in lower case; and the caller's header stays as it was.
func TestPriorityIsSaidOnceOnTheWire(t *testing.T) {
	got := make(chan []string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Values(priority.Header)
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, &fusehttp.Transport{Group: newGroup(t, executor.GroupConfig{})})
	for _, tc := range []struct {
		name string
		own  []string // the caller's values under the header
		key  string   // the map key they are set under
		p    priority.Priority
	}{
		{"none of its own", nil, priority.Header, priority.Critical},
		{"the same of its own", []string{"critical"}, priority.Header, priority.Critical},
		{"another of its own", []string{"critical"}, priority.Header, priority.Sheddable},
		{"the same twice", []string{"sheddable", "sheddable"}, priority.Header, priority.Sheddable},
		{"the same in lower case", []string{"critical"}, "fusebox-priority", priority.Critical},
		{"another in lower case", []string{"critical"}, "fusebox-priority", priority.Sheddable},
	} {
		req, err := http.NewRequestWithContext(priority.With(t.Context(), tc.p), http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		if tc.own != nil {
			req.Header[tc.key] = tc.own
		}
		before := req.Header.Clone()
		resp, err := c.Do(req)
		require.NoError(t, err, tc.name)
		resp.Body.Close()
		assert.Equal(t, []string{tc.p.String()}, <-got, tc.name)
		assert.Equal(t, before, req.Header, "%s: the caller's header changed", tc.name)
	}
}
