package dashboard_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
)

// fakeShedder is a shedder's stats that the test writes and the handler
// reads.
type fakeShedder struct {
	mu sync.Mutex
	st shed.Stats
}

func (f *fakeShedder) stats() shed.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st
}

func (f *fakeShedder) set(fn func(*shed.Stats)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(&f.st)
}

func shedderTile(t *testing.T, s dashboard.Snapshot, name string) dashboard.Shedder {
	t.Helper()
	for _, d := range s.Shedders {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no shedder %q in the snapshot", name)
	return dashboard.Shedder{}
}

// overload is one second of an overload: 100 requests admitted, 60 shed
// (50 sheddable, 10 default), the estimates of a service that completes
// 450 a second.
func overload(st *shed.Stats) {
	st.Admitted += 100
	st.Shed[priority.Sheddable] += 50
	st.Shed[priority.Default] += 10
	st.ByReason[shed.Queue] += 55
	st.ByReason[shed.Limit] += 5
	st.Overload, st.Capacity, st.InFlight, st.Limit = true, 450.25, 12, 45
	st.Delay, st.DropRate = 15*time.Millisecond, 0.375
}

func TestTheShedderTileShowsShedPerSecondByPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, dashboard.Options{})
		h.Add(newExecutor(t, "payments"))
		f := &fakeShedder{}
		h.AddShedderStats("api", f.stats)

		s := snapshot(t, h)
		d := shedderTile(t, s, "api")
		assert.Equal(t, "normal", d.State)
		assert.Empty(t, d.Series.T, "the first sample is the baseline")
		assert.Equal(t, map[string]uint64{"critical": 0, "default": 0, "sheddable": 0}, d.Shed)
		assert.Len(t, s.Suppliers, 1, "beside the suppliers")

		time.Sleep(time.Second)
		f.set(overload)
		d = shedderTile(t, snapshot(t, h), "api")
		assert.Equal(t, "overload", d.State)
		assert.Equal(t, 450.25, d.CapacityRPS)
		assert.Equal(t, int64(12), d.InFlight)
		assert.Equal(t, int64(45), d.Limit)
		assert.Equal(t, 15.0, d.DelayMS)
		assert.Equal(t, 0.38, d.DropRate)
		assert.Equal(t, map[string]uint64{"critical": 0, "default": 10, "sheddable": 50}, d.Shed)
		assert.Equal(t, map[string]uint64{"queue": 55, "limit": 5, "tenant": 0}, d.ByReason)
		require.Len(t, d.Series.T, 1)
		assert.Equal(t, []float64{100}, d.Series.Admitted)
		assert.Equal(t, map[string][]float64{"critical": {0}, "default": {10}, "sheddable": {50}}, d.Series.Shed)

		time.Sleep(2 * time.Second) // two intervals: the rates are per second
		f.set(overload)
		d = shedderTile(t, snapshot(t, h), "api")
		assert.Equal(t, []float64{100, 50}, d.Series.Admitted)
		assert.Equal(t, []float64{50, 25}, d.Series.Shed["sheddable"])
	})
}

func TestTheShedderTileKeepsHistoryPoints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, dashboard.Options{History: 3})
		f := &fakeShedder{}
		h.AddShedderStats("api", f.stats)
		snapshot(t, h)
		for range 5 {
			time.Sleep(time.Second)
			f.set(overload)
			snapshot(t, h)
		}
		d := shedderTile(t, snapshot(t, h), "api")
		assert.Len(t, d.Series.T, 3)
		assert.Equal(t, []float64{50, 50, 50}, d.Series.Shed["sheddable"])
	})
}

func TestTheStreamCarriesTheShedders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, dashboard.Options{})
		f := &fakeShedder{}
		h.AddShedderStats("api", f.stats)
		w := newSSEWriter()
		_, cancel := stream(h, w)
		defer cancel()
		require.Equal(t, http.StatusOK, <-w.code)
		first := decode(t, next(t, w, time.Millisecond))
		assert.Equal(t, "normal", shedderTile(t, first, "api").State)

		f.set(overload)
		e := next(t, w, 1100*time.Millisecond)
		assert.Equal(t, "update", e.name)
		d := shedderTile(t, decode(t, e), "api")
		assert.Equal(t, "overload", d.State, "an overload shows within one interval")
		require.Len(t, d.Series.T, 1, "an update carries the newest point only")
		assert.Equal(t, []float64{50}, d.Series.Shed["sheddable"])
		assert.Equal(t, []float64{0}, d.Series.Shed["critical"])
	})
}

func TestAddShedderShowsARealShedder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := shed.New(shed.Config{Shadow: true})
		require.NoError(t, err)
		defer s.Close()
		h := newHandler(t, dashboard.Options{})
		h.AddShedder("public", s)
		var held []shed.Ticket
		for range 3 {
			tk, err := s.Allow(priority.Default, "")
			require.NoError(t, err)
			held = append(held, tk)
		}
		d := shedderTile(t, snapshot(t, h), "public")
		assert.True(t, d.Shadow)
		assert.Equal(t, uint64(3), d.Admitted)
		assert.Equal(t, int64(3), d.InFlight)
		for _, tk := range held {
			tk.Done()
		}
		time.Sleep(time.Second)
		assert.Zero(t, shedderTile(t, snapshot(t, h), "public").InFlight)
	})
}

func TestAddShedderRefusesBadArguments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log bytes.Buffer
		h := newHandler(t, dashboard.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		f := &fakeShedder{}
		h.AddShedder("api", nil)
		h.AddShedderStats("", f.stats)
		h.AddShedderStats("api", f.stats)
		h.AddShedderStats("api", f.stats)
		s := snapshot(t, h)
		require.Len(t, s.Shedders, 1)
		assert.Contains(t, log.String(), "AddShedder refused a nil *shed.Shedder")
		assert.Contains(t, log.String(), "AddShedder refused a shedder with an empty name")
		assert.Contains(t, log.String(), `AddShedder refused a second shedder named \"api\"`)
	})
}

func TestWithoutSheddersTheSnapshotHasNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, dashboard.Options{})
		h.Add(newExecutor(t, "payments"))
		w := do(h, http.MethodGet, "/api/snapshot", "", nil)
		assert.NotContains(t, w.Body.String(), `"shedders"`)
	})
}
