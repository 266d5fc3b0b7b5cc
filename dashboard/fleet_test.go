package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/dashboard"
)

// fakeView stands in for a fleet link's view: it counts its calls and
// answers the supplier it was asked about.
type fakeView struct {
	calls atomic.Int64
	err   error
	panic bool
}

func (f *fakeView) view(_ context.Context, supplier string) (any, error) {
	f.calls.Add(1)
	if f.panic {
		panic("boom")
	}
	if f.err != nil {
		return nil, f.err
	}
	return map[string]any{"supplier": supplier, "prober": "r1", "n": f.calls.Load(),
		"replicas": []map[string]string{{"replica": "r0", "state": "open"}, {"replica": "r1", "state": "open"}}}, nil
}

// The page's fleet section asks api/fleet, which answers the hook's
// result as JSON, asking the hook at most once per supplier every 2 s
// however many requests come.
func TestTheFleetViewIsServedAndRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeView{}
		g := newGroup(t, "payments", "search")
		h := newHandler(t, dashboard.Options{FleetView: f.view})
		h.AddGroup(g)
		assert.True(t, snapshot(t, h).Fleet, "the snapshot tells the page to offer the section")

		get := func(id string) map[string]any {
			t.Helper()
			w := do(h, http.MethodGet, "/api/fleet?supplier="+id, "", nil)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
			var v map[string]any
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &v))
			return v
		}
		v := get("payments")
		assert.Equal(t, "payments", v["supplier"])
		assert.Equal(t, "r1", v["prober"])
		assert.Len(t, v["replicas"], 2)
		for range 20 {
			get("payments")
		}
		assert.EqualValues(t, 1, f.calls.Load(), "twenty more requests within 2 s: one call")
		get("search")
		assert.EqualValues(t, 2, f.calls.Load(), "another supplier has its own answer")
		time.Sleep(2 * time.Second)
		assert.EqualValues(t, 3, get("payments")["n"], "after 2 s the hook is asked again")
	})
}

func TestTheFleetViewRefusesWhatItCannotAnswer(t *testing.T) {
	g := newGroup(t, "payments", "search", "other")
	h := newHandler(t, dashboard.Options{FleetView: (&fakeView{err: errors.New("redis: connection refused")}).view})
	h.AddGroup(g)
	w := do(h, http.MethodGet, "/api/fleet?supplier=payments", "", nil)
	assert.Equal(t, http.StatusBadGateway, w.Code)
	assert.Contains(t, w.Body.String(), "redis: connection refused")
	w = do(h, http.MethodGet, "/api/fleet?supplier=nobody", "", nil)
	assert.Equal(t, http.StatusNotFound, w.Code)
	assert.Contains(t, w.Body.String(), `no supplier "nobody"`)
	w = do(h, http.MethodPost, "/api/fleet?supplier=payments", "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, w.Code)

	p := newHandler(t, dashboard.Options{FleetView: (&fakeView{panic: true}).view})
	p.AddGroup(g)
	w = do(p, http.MethodGet, "/api/fleet?supplier=search", "", nil)
	assert.Equal(t, http.StatusBadGateway, w.Code)
	assert.Contains(t, w.Body.String(), "Options.FleetView panicked: boom")

	none := newHandler(t, dashboard.Options{})
	none.AddGroup(g)
	assert.False(t, snapshot(t, none).Fleet, "no hook: the page offers no fleet section")
	w = do(none, http.MethodGet, "/api/fleet?supplier=payments", "", nil)
	assert.Equal(t, http.StatusNotFound, w.Code)
	assert.Contains(t, w.Body.String(), "Options.FleetView")

	for name, v := range map[string]any{"panics": panicJSON{}, "ends its goroutine": goexitJSON{}} {
		m := newHandler(t, dashboard.Options{FleetView: func(context.Context, string) (any, error) { return v, nil }})
		m.AddGroup(g)
		w = do(m, http.MethodGet, "/api/fleet?supplier=search", "", nil)
		assert.Equal(t, http.StatusBadGateway, w.Code, "an answer whose MarshalJSON %s", name)
		assert.Contains(t, w.Body.String(), "Options.FleetView")
	}

	big := newHandler(t, dashboard.Options{FleetView: func(context.Context, string) (any, error) {
		return make([]byte, 70<<10), nil
	}})
	big.AddGroup(g)
	w = do(big, http.MethodGet, "/api/fleet?supplier=other", "", nil)
	assert.Equal(t, http.StatusBadGateway, w.Code)
	assert.Contains(t, w.Body.String(), "over 64 KiB")
}

// panicJSON and goexitJSON are answers whose encoding, user code too,
// panics or ends its goroutine.
type (
	panicJSON  struct{}
	goexitJSON struct{}
)

func (panicJSON) MarshalJSON() ([]byte, error)  { panic("marshal bug") }
func (goexitJSON) MarshalJSON() ([]byte, error) { runtime.Goexit(); return nil, nil }

// A FleetView that ignores its context holds neither the request nor the
// requests for the same supplier queued behind it past fleetTimeout.
func TestAFleetViewThatHangsIsBounded(t *testing.T) {
	for name, view := range map[string]func(release chan struct{}) (any, error){
		"a hook that ignores its context": func(release chan struct{}) (any, error) { <-release; return nil, nil },
		"an answer whose encoding hangs":  func(release chan struct{}) (any, error) { return blockingJSON(release), nil },
	} {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, "payments")
			release := make(chan struct{})
			h := newHandler(t, dashboard.Options{FleetView: func(context.Context, string) (any, error) { return view(release) }})
			h.AddGroup(g)
			start := time.Now()
			w := do(h, http.MethodGet, "/api/fleet?supplier=payments", "", nil)
			assert.Equal(t, http.StatusBadGateway, w.Code, name)
			assert.Contains(t, w.Body.String(), "Options.FleetView did not return within 2s", name)
			assert.Equal(t, 2*time.Second, time.Since(start), "%s: bounded, not held until the hook returns", name)
			close(release)
		})
	}
}

// blockingJSON is an answer whose MarshalJSON waits until it is closed.
type blockingJSON chan struct{}

func (b blockingJSON) MarshalJSON() ([]byte, error) { <-b; return []byte("{}"), nil }
