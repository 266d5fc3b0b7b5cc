package dashboard

import (
	"slices"
	"time"

	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
)

// Shedder is the tile of an inbound shedder added with AddShedder: its
// state and estimates now, its counts since it was made, and its rates.
type Shedder struct {
	Name string `json:"name"`
	// State is "overload" while the shedder refuses requests (or, in
	// shadow mode, would), "normal" otherwise.
	State       string  `json:"state"`
	Shadow      bool    `json:"shadow"`       // shed.Config.Shadow: nothing is refused
	CapacityRPS float64 `json:"capacity_rps"` // requests per second the service completes, estimated
	InFlight    int64   `json:"in_flight"`    // admitted requests not done
	Limit       int64   `json:"limit"`        // the in-flight limit of an overload; 0: none
	DelayMS     float64 `json:"delay_ms"`     // the run queue's delay per request, last interval
	DropRate    float64 `json:"drop_rate"`    // share of the arrivals refused, 0 to 1
	Tenants     int     `json:"tenants"`      // tenant keys tracked
	Admitted    uint64  `json:"admitted"`
	// Shed counts the requests refused (in shadow mode: that would have
	// been) by priority, ByReason the same by reason (queue, limit, tenant).
	Shed     map[string]uint64 `json:"shed"`
	ByReason map[string]uint64 `json:"by_reason"`
	Series   ShedSeries        `json:"series"`
}

// ShedSeries are a shedder's per-second rates, one point per sample,
// oldest first, as Series are a supplier's: Admitted requests admitted,
// Shed requests shed by priority (critical, default, sheddable).
type ShedSeries struct {
	T        []int64              `json:"t"`
	Admitted []float64            `json:"admitted"`
	Shed     map[string][]float64 `json:"shed"`
}

// AddShedder shows s as a tile named name beside the suppliers, until
// the handler closes. A nil s, an empty name or one already added is
// refused, reported to Options.Logger.
func (h *Handler) AddShedder(name string, s *shed.Shedder) {
	if s == nil {
		h.refuse("AddShedder", "a nil *shed.Shedder")
		return
	}
	h.addShedder("AddShedder", name, s.Stats)
}

// addShedder adds a source of shedder stats under name.
func (h *Handler) addShedder(method, name string, stats func() shed.Stats) {
	if name == "" {
		h.refuse(method, "a shedder with an empty name")
		return
	}
	h.mu.Lock()
	dup := slices.ContainsFunc(h.sheds.list, func(d namedShedder) bool { return d.name == name })
	if !dup {
		h.sheds.list = append(h.sheds.list, namedShedder{name: name, stats: stats})
	}
	h.mu.Unlock()
	if dup {
		h.refuse(method, "a second shedder named "+quote(name))
	}
}

// shedBoard is the handler's shedders: list is guarded by Handler.mu
// (appended to only), tracks by Handler.sampleMu.
type shedBoard struct {
	list   []namedShedder
	tracks map[string]*shedTrack
}

type namedShedder struct {
	name  string
	stats func() shed.Stats
}

// shedSeries is the number of series of a shedder: admitted, then shed
// by priority.
const shedSeries = 1 + priority.Levels

// shedTrack is what the sampler remembers of one shedder between samples.
type shedTrack struct {
	last [shedSeries]uint64
	t    []int64
	v    [shedSeries][]float64
}

// counters returns the cumulative counts behind a shedder's series.
func shedCounters(st *shed.Stats) (c [shedSeries]uint64) {
	c[0] = st.Admitted
	copy(c[1:], st.Shed[:])
	return c
}

// sample reads every shedder's stats at now, adds a point to each track
// when point is set (dt after the previous sample), and returns the
// tiles with their whole history (full) and with the newest point only
// (delta). The caller holds Handler.sampleMu.
func (h *Handler) sampleShedders(now time.Time, dt time.Duration, point bool) (full, delta []Shedder) {
	h.mu.Lock()
	list := h.sheds.list
	h.mu.Unlock()
	if len(list) == 0 {
		return nil, nil
	}
	if h.sheds.tracks == nil {
		h.sheds.tracks = map[string]*shedTrack{}
	}
	history := h.opts.History
	full, delta = make([]Shedder, len(list)), make([]Shedder, len(list))
	for i, d := range list {
		st := d.stats()
		c := shedCounters(&st)
		tr := h.sheds.tracks[d.name]
		fresh := false
		if tr == nil {
			tr = &shedTrack{}
			h.sheds.tracks[d.name] = tr
		} else if point {
			tr.t = append(tr.t, now.UnixMilli())
			for j := range c {
				tr.v[j] = append(tr.v[j], round2(float64(c[j]-tr.last[j])/dt.Seconds()))
			}
			if n := len(tr.t); n > history {
				// Slide the window; the arrays are copied anew as append
				// grows them, so what is dropped is freed in time.
				tr.t = tr.t[n-history:]
				for j := range tr.v {
					tr.v[j] = tr.v[j][n-history:]
				}
			}
			fresh = true
		}
		tr.last = c
		full[i] = shedderOf(d.name, &st)
		delta[i] = full[i]
		full[i].Series = tr.series(len(tr.t))
		k := 0
		if fresh {
			k = 1
		}
		delta[i].Series = tr.series(k)
	}
	return full, delta
}

// series copies the newest k points out of tr.
func (tr *shedTrack) series(k int) ShedSeries {
	n := len(tr.t)
	s := ShedSeries{T: append([]int64{}, tr.t[n-k:]...), Admitted: append([]float64{}, tr.v[0][n-k:]...),
		Shed: make(map[string][]float64, priority.Levels)}
	for p := range priority.Levels {
		s.Shed[priority.Priority(p).String()] = append([]float64{}, tr.v[1+p][n-k:]...)
	}
	return s
}

// shedderOf converts a shedder's stats into a tile without series.
func shedderOf(name string, st *shed.Stats) Shedder {
	d := Shedder{
		Name: name, State: "normal", Shadow: st.Shadow, CapacityRPS: round2(st.Capacity),
		InFlight: st.InFlight, Limit: st.Limit, DelayMS: ms(st.Delay), DropRate: round2(st.DropRate),
		Tenants: st.Tenants, Admitted: st.Admitted,
		Shed: make(map[string]uint64, priority.Levels), ByReason: make(map[string]uint64, shed.Reasons-1),
	}
	if st.Overload {
		d.State = "overload"
	}
	for p, n := range st.Shed {
		d.Shed[priority.Priority(p).String()] = n
	}
	for r := shed.Reason(1); r < shed.Reasons; r++ {
		d.ByReason[r.String()] = st.ByReason[r]
	}
	return d
}
