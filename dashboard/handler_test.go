package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
)

func TestNewNamesTheInvalidField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  dashboard.Options
		field string
	}{
		{"an interval below 100 ms", dashboard.Options{Interval: 10 * time.Millisecond}, "Options.Interval"},
		{"an interval above a minute", dashboard.Options{Interval: time.Hour}, "Options.Interval"},
		{"a negative history", dashboard.Options{History: -1}, "Options.History"},
		{"a history above 3600", dashboard.Options{History: 3601}, "Options.History"},
		{"negative max clients", dashboard.Options{MaxClients: -1}, "Options.MaxClients"},
		{"more clients per address than in all", dashboard.Options{MaxClients: 2, MaxClientsPerAddress: 3}, "Options.MaxClientsPerAddress"},
		{"negative clients per address", dashboard.Options{MaxClientsPerAddress: -1}, "Options.MaxClientsPerAddress"},
		{"negative max suppliers", dashboard.Options{MaxSuppliers: -2}, "Options.MaxSuppliers"},
		{"a negative write timeout", dashboard.Options{WriteTimeout: -time.Second}, "Options.WriteTimeout"},
		{"a negative stream lifetime", dashboard.Options{StreamLifetime: -time.Second}, "Options.StreamLifetime"},
		{"a stream lifetime below a second", dashboard.Options{StreamLifetime: time.Millisecond}, "Options.StreamLifetime"},
		{"an allowed host with a port", dashboard.Options{AllowedHosts: []string{"admin.internal:9090"}}, "Options.AllowedHosts[0]"},
		{"an empty allowed host", dashboard.Options{AllowedHosts: []string{""}}, "Options.AllowedHosts[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dashboard.New(tc.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
	t.Run("the zero value is valid", func(t *testing.T) {
		_, err := dashboard.New(dashboard.Options{})
		require.NoError(t, err)
	})
}

func TestSnapshotDescribesEverySupplierTroubleFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, "catalog", "payments", "search")
		solo := newExecutor(t, "payments") // same name as the group's: shown as payments#2
		h := newHandler(t, dashboard.Options{Title: "shop"})
		h.AddGroup(g)
		h.Add(solo)

		pay, _ := g.Executor("payments")
		pay.Breaker().Trip(breaker.Manual)
		search, _ := g.Executor("search")
		call(t, search, 3, errors.New("boom")) // 3 failures: open
		tripped := time.Now()
		time.Sleep(500 * time.Millisecond)

		w := do(h, http.MethodGet, "/api/snapshot", "", nil)
		require.Equal(t, http.StatusOK, w.Code)
		assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
		assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
		var s dashboard.Snapshot
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &s))

		assert.Equal(t, "shop", s.Title)
		assert.True(t, s.Full)
		assert.Equal(t, 4, s.Total)
		assert.Equal(t, map[string]int{"open": 2, "closed": 2}, s.Counts)
		var ids []string
		for _, sup := range s.Suppliers {
			ids = append(ids, sup.ID)
		}
		assert.Equal(t, []string{"payments", "search", "catalog", "payments#2"}, ids, "open first, then by id")

		p := tile(t, s, "payments")
		assert.Equal(t, "open", p.State)
		assert.Equal(t, "manual", p.Reason)
		assert.Equal(t, int64(500), p.InStateMS)
		require.NotNil(t, p.ProbeInMS)
		assert.Equal(t, int64(1500), *p.ProbeInMS, "reset timeout 2 s, tripped 0.5 s ago")
		assert.True(t, p.ProbeAt.Equal(tripped.Add(2*time.Second)))
		assert.Equal(t, 2, p.Slots)
		assert.Equal(t, 2, p.Free)

		sr := tile(t, s, "search")
		assert.Equal(t, "consecutive-failures", sr.Reason)
		assert.Equal(t, uint64(3), sr.Totals.Failures)

		c := tile(t, s, "catalog")
		assert.Equal(t, "closed", c.State)
		assert.Equal(t, "none", c.Reason)
		assert.Nil(t, c.ProbeInMS, "only an open breaker has a probe due")
		assert.Equal(t, 5, c.Rank)
		assert.Zero(t, c.LatencyP50MS, "no successful call yet: latency unknown")
	})
}

func TestSeriesAreRatesOfCounterDeltas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, "payments")
		idle := newExecutor(t, "idle")
		h := newHandler(t, dashboard.Options{})
		h.Add(ex)
		h.Add(idle)

		base := snapshot(t, h) // the baseline: no point yet
		assert.Empty(t, tile(t, base, "payments").Series.T)

		call(t, ex, 6, nil)
		call(t, ex, 2, errors.New("boom"))
		time.Sleep(2 * time.Second) // two seconds: rates are per second
		s := snapshot(t, h)
		p := tile(t, s, "payments").Series
		require.Len(t, p.T, 1)
		assert.Equal(t, time.Now().UnixMilli(), p.T[0])
		assert.Equal(t, []float64{3}, p.Calls["success"])
		assert.Equal(t, []float64{1}, p.Calls["failure"])
		assert.Equal(t, []float64{0}, p.Calls["ignored"])

		ex.Breaker().ForceOpen()
		for range 4 {
			_, err := executor.Do(context.Background(), ex, func(context.Context) (int, error) { return 0, nil })
			require.ErrorIs(t, err, breaker.ErrOpen)
		}
		time.Sleep(time.Second)
		p = tile(t, snapshot(t, h), "payments").Series
		require.Len(t, p.T, 2)
		assert.Equal(t, []float64{0, 4}, p.Refused["open"])
		assert.Equal(t, []float64{3, 0}, p.Calls["success"])

		assert.Empty(t, tile(t, s, "idle").Series.T, "an idle supplier keeps no history")
	})
}

// A Group evicts an idle executor and makes a fresh one for the same name,
// whose counters start again at 0: its history starts again too, instead of
// a rate computed from a counter that went backwards.
func TestAnExecutorMadeAgainUnderItsNameStartsANewHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, err := executor.NewGroup(executor.GroupConfig{IdleTimeout: time.Second})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, g.Close(context.Background())) })
		h := newHandler(t, dashboard.Options{Interval: time.Second})
		h.AddGroup(g)
		old, err := g.Executor("a")
		require.NoError(t, err)
		snapshot(t, h) // the baseline
		call(t, old, 100, nil)
		time.Sleep(1100 * time.Millisecond)
		_, _ = g.Executor("b") // the sweep marks a unused
		assert.Equal(t, []float64{90.91}, tile(t, snapshot(t, h), "a").Series.Calls["success"])
		time.Sleep(1100 * time.Millisecond)
		fresh, err := g.Executor("a") // the sweep evicts a; a fresh one serves
		require.NoError(t, err)
		require.NotSame(t, old, fresh)
		call(t, fresh, 1, nil)

		a := tile(t, snapshot(t, h), "a")
		assert.Equal(t, uint64(1), a.Totals.Successes)
		assert.Empty(t, a.Series.T, "the new executor's first sample is its baseline")
		call(t, fresh, 3, nil)
		time.Sleep(time.Second)
		assert.Equal(t, []float64{3}, tile(t, snapshot(t, h), "a").Series.Calls["success"])
	})
}

func TestHistoryIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, "payments")
		h := newHandler(t, dashboard.Options{History: 5})
		h.Add(ex)
		snapshot(t, h)
		for range 12 {
			call(t, ex, 1, nil)
			time.Sleep(time.Second)
			snapshot(t, h)
		}
		p := tile(t, snapshot(t, h), "payments").Series
		assert.Len(t, p.T, 5)
		assert.Len(t, p.Calls["success"], 5)

		// Five idle samples in a row free the history.
		for range 6 {
			time.Sleep(time.Second)
			snapshot(t, h)
		}
		assert.Empty(t, tile(t, snapshot(t, h), "payments").Series.T)
	})
}

func TestSnapshotsReadStatsAtMostOncePerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, dashboard.Options{})
		h.AddGroup(newGroup(t, "payments"))
		first := snapshot(t, h).Seq
		for range 1000 {
			require.Equal(t, first, snapshot(t, h).Seq, "a burst of requests is answered from one sample")
		}
		time.Sleep(time.Second)
		assert.Equal(t, first+1, snapshot(t, h).Seq)
	})
}

func TestMaxSuppliersKeepsTheWorst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, "a", "b", "c", "z")
		z, _ := g.Executor("z")
		z.Breaker().ForceOpen()
		h := newHandler(t, dashboard.Options{MaxSuppliers: 2})
		h.AddGroup(g)
		s := snapshot(t, h)
		assert.Equal(t, 4, s.Total)
		require.Len(t, s.Suppliers, 2)
		assert.Equal(t, "z", s.Suppliers[0].ID)
		assert.Equal(t, "forced-open", s.Suppliers[0].State)
		assert.Equal(t, "a", s.Suppliers[1].ID)
	})
}

func TestRemovedSuppliersDisappear(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, "payments")
		h := newHandler(t, dashboard.Options{})
		h.Add(ex)
		require.Len(t, snapshot(t, h).Suppliers, 1)
		h.Remove(ex)
		time.Sleep(time.Second)
		assert.Empty(t, snapshot(t, h).Suppliers)
		h.Remove(ex) // twice: nothing happens
	})
}

func TestAddRefusesWhatItCannotShow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer // written by Add and AddGroup, on this goroutine
		h := newHandler(t, dashboard.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		h.Add(nil)
		h.Add(&executor.Executor{})
		h.AddGroup(nil)
		h.Add(newExecutor(t, "payments"))
		for _, want := range []string{
			"Add refused a nil *executor.Executor",
			"Add refused a zero executor.Executor (make it with executor.New)",
			"AddGroup refused a nil *executor.Group",
		} {
			assert.Contains(t, logs.String(), want)
		}
		assert.Equal(t, 3, strings.Count(logs.String(), "level=ERROR"))

		// Before, the first frame panicked, and so did the sampler's
		// goroutine at its first tick: the process crashed.
		assert.Len(t, h.Snapshot().Suppliers, 1)
		w := newSSEWriter()
		_, cancel := stream(h, w)
		defer cancel()
		require.Equal(t, http.StatusOK, <-w.code)
		assert.Len(t, decode(t, next(t, w, time.Millisecond)).Suppliers, 1)
		assert.Len(t, decode(t, next(t, w, 1100*time.Millisecond)).Suppliers, 1, "the sampler's frame")
	})
}

func TestRemoveOfNilKeepsTheGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, dashboard.Options{})
		h.AddGroup(newGroup(t, "payments"))
		h.Remove(nil) // before, it matched the group, whose source has no executor
		time.Sleep(time.Second)
		assert.Len(t, snapshot(t, h).Suppliers, 1)
	})
}

func TestAZeroHandlerNamesNew(t *testing.T) {
	var h dashboard.Handler
	for _, path := range []string{"/", "/api/snapshot", "/api/events"} {
		w := do(&h, http.MethodGet, path, "", nil)
		assert.Equal(t, http.StatusInternalServerError, w.Code, path)
		assert.Contains(t, w.Body.String(), "zero Handler (make it with dashboard.New)", path)
	}
	assert.ErrorContains(t, h.Close(context.Background()), "dashboard.New")
	h.Add(newExecutor(t, "payments"))
	assert.Empty(t, h.Snapshot().Suppliers)

	made := newHandler(t, dashboard.Options{})
	//lint:ignore SA1012 a nil context is what this test is about
	assert.ErrorContains(t, made.Close(nil), "nil context") //nolint:staticcheck
}

func TestPageIsEmbeddedAndSelfContained(t *testing.T) {
	h := newHandler(t, dashboard.Options{})
	for _, tc := range []struct{ path, ctype, contains string }{
		{"/", "text/html", `<script src="app.js" defer></script>`},
		{"/app.js", "text/javascript", `new EventSource("api/events")`},
		{"/style.css", "text/css", "prefers-color-scheme"},
	} {
		t.Run("it serves "+tc.path, func(t *testing.T) {
			w := do(h, http.MethodGet, tc.path, "", nil)
			require.Equal(t, http.StatusOK, w.Code)
			assert.Contains(t, w.Header().Get("Content-Type"), tc.ctype)
			assert.Contains(t, w.Body.String(), tc.contains)
			csp := w.Header().Get("Content-Security-Policy")
			assert.Contains(t, csp, "frame-ancestors 'none'")
			assert.Contains(t, csp, "connect-src 'self'")
		})
	}
	t.Run("it loads nothing from another origin", func(t *testing.T) {
		files := dashboard.StaticFiles()
		n := 0
		require.NoError(t, fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			n++
			b, err := fs.ReadFile(files, path)
			require.NoError(t, err)
			text := strings.ReplaceAll(string(b), "http://www.w3.org/2000/svg", "") // a namespace, not a fetch
			assert.NotContains(t, text, "http://", path)
			assert.NotContains(t, text, "https://", path)
			assert.NotContains(t, text, `src="//`, path)
			return nil
		}))
		assert.Equal(t, 3, n)
	})
}
