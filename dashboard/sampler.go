package dashboard

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fusebox-go/fusebox/executor"
)

// frame is one sample, encoded once for every reader: full holds every
// series' whole history (the snapshot endpoint, a stream's first event),
// delta only the newest points (a stream's following events). A frame is
// never changed after it is made, so clients share it without locks.
type frame struct {
	seq   uint64
	at    time.Time
	snap  Snapshot // the full one
	full  []byte
	delta []byte
}

// track is what the sampler remembers of one supplier between samples.
type track struct {
	ex   *executor.Executor // whose counters last holds
	last []uint64           // cumulative counters at the previous sample
	ring *ring              // nil while the supplier is idle: idle suppliers cost no history
	idle int                // consecutive all-zero points in ring
	seen uint64             // seq of the sample that last found the supplier
}

// advance adds one point to the track: the rates of its counters c since
// the previous sample, dt ago. It reports whether a point was added. An idle
// supplier gets no ring until a counter moves, and loses it again after a
// whole history of zeros.
func (tr *track) advance(c []uint64, now time.Time, dt time.Duration, history int) (fresh bool) {
	rates := make([]float64, numSeries)
	busy := false
	for i := range c {
		d := c[i] - tr.last[i] // one executor's counters only grow (wentBack)
		rates[i] = float64(d) / dt.Seconds()
		busy = busy || d != 0
	}
	if busy && tr.ring == nil {
		tr.ring = newRing(history)
	}
	if tr.ring == nil {
		return false
	}
	tr.ring.push(now.UnixMilli(), rates)
	if busy {
		tr.idle = 0
		return true
	}
	if tr.idle++; tr.idle >= history {
		tr.ring, tr.idle = nil, 0 // a whole history of nothing
		return false
	}
	return true
}

// ring holds the newest n points of every series, at most cap of them.
type ring struct {
	t    []int64     // Unix ms
	v    [][]float32 // [series][point]
	head int         // index of the oldest point
	n    int
}

func newRing(size int) *ring {
	r := &ring{t: make([]int64, size), v: make([][]float32, numSeries)}
	for i := range r.v {
		r.v[i] = make([]float32, size)
	}
	return r
}

func (r *ring) push(t int64, vals []float64) {
	i := (r.head + r.n) % len(r.t)
	if r.n == len(r.t) {
		r.head = (r.head + 1) % len(r.t)
	} else {
		r.n++
	}
	r.t[i] = t
	for s, v := range vals {
		r.v[s][i] = float32(v)
	}
}

// series copies the newest k points (all of them for k ≥ n) out of r.
func (r *ring) series(k int) Series {
	s := emptySeries()
	if r == nil {
		return s
	}
	k = min(k, r.n)
	s.T = make([]int64, k)
	vals := make([][]float64, numSeries)
	for j := range vals {
		vals[j] = make([]float64, k)
	}
	for p := range k {
		i := (r.head + r.n - k + p) % len(r.t)
		s.T[p] = r.t[i]
		for j := range vals {
			vals[j][p] = round2(float64(r.v[j][i]))
		}
	}
	for j, n := range outcomeNames {
		s.Calls[n] = vals[j]
	}
	for j, n := range rejectionNames {
		s.Refused[n] = vals[len(outcomeNames)+j]
	}
	return s
}

func emptySeries() Series {
	s := Series{T: []int64{}, Calls: map[string][]float64{}, Refused: map[string][]float64{}}
	for _, n := range outcomeNames {
		s.Calls[n] = []float64{}
	}
	for _, n := range rejectionNames {
		s.Refused[n] = []float64{}
	}
	return s
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// sampleLocked reads every supplier's stats, adds one point to each
// series (the counter deltas since the previous sample, per second) and
// makes a frame. The caller holds h.sampleMu. A sample taken less than half
// an interval after the previous one makes no frame (the rates would
// be noise): it returns the previous frame. After a gap of more than
// 2.5 intervals (nobody watched) it adds no point, only a new baseline.
func (h *Handler) sampleLocked(now time.Time) *frame {
	prev := h.latest
	var dt time.Duration
	if prev != nil {
		dt = now.Sub(prev.at)
		if dt < h.opts.Interval/2 {
			return prev
		}
	}
	point := prev != nil && dt <= h.opts.Interval*5/2
	seq := uint64(1)
	if prev != nil {
		seq = prev.seq + 1
	}

	// Rows keep the raw stats; only those shown (MaxSuppliers, trouble
	// first) become tiles, so thousands of idle suppliers stay cheap.
	type row struct {
		id    string
		st    executor.Stats
		rank  int
		tr    *track
		fresh bool // a point was added this sample
	}
	var rows []row
	counts := map[string]int{}
	h.each(func(id string, ex *executor.Executor) {
		r := row{id: id, st: ex.Stats()}
		r.rank = rank(&r.st, saturated(&r.st))
		counts[r.st.Breaker.State.String()]++
		c := counters(&r.st)
		tr := h.tracks[id]
		if tr == nil || tr.seen != seq-1 || tr.ex != ex || wentBack(c, tr.last) {
			// New, back after an absence, or a new executor under the same
			// name (a Group evicted the old one and made a fresh one, whose
			// counters start again at 0): this sample is its baseline, and
			// its history starts again.
			tr = &track{ex: ex, last: c, seen: seq}
			h.tracks[id] = tr
			r.tr = tr
			rows = append(rows, r)
			return
		}
		r.fresh = point && tr.advance(c, now, dt, h.opts.History)
		tr.last, tr.seen = c, seq
		r.tr = tr
		rows = append(rows, r)
	})
	// Forget suppliers that are gone (evicted from their group, removed).
	for id, tr := range h.tracks {
		if tr.seen != seq {
			delete(h.tracks, id)
		}
	}

	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.id, b.id))
	})
	total := len(rows)
	rows = rows[:min(len(rows), h.opts.MaxSuppliers)]

	full := Snapshot{
		Title: h.opts.Title, Time: now, Seq: seq, IntervalMS: h.opts.Interval.Milliseconds(),
		History: h.opts.History, Control: h.opts.AllowControl, Fleet: h.opts.FleetView != nil, Full: true, Total: total, Counts: counts,
		Suppliers: make([]Supplier, len(rows)),
	}
	delta := full
	delta.Full = false
	delta.Suppliers = make([]Supplier, len(rows))
	pol := h.policyTotals()
	for i, r := range rows {
		sup := supplierOf(r.id, &r.st, now)
		sup.Policy = pol[r.st.Supplier]
		full.Suppliers[i] = sup
		full.Suppliers[i].Series = r.tr.ring.series(h.opts.History)
		delta.Suppliers[i] = sup
		if r.fresh {
			delta.Suppliers[i].Series = r.tr.ring.series(1)
		} else {
			delta.Suppliers[i].Series = emptySeries()
		}
	}
	full.Shedders, delta.Shedders = h.sampleShedders(now, dt, point)
	f := &frame{seq: seq, at: now, snap: full, full: mustJSON(full), delta: mustJSON(delta)}
	h.latest = f
	return f
}

// wentBack reports whether any counter is below its previous value (or
// the counters changed in number): they are not the same executor's.
func wentBack(c, last []uint64) bool {
	if len(c) != len(last) {
		return true
	}
	for i := range c {
		if c[i] < last[i] {
			return true
		}
	}
	return false
}

// mustJSON encodes v, which holds only strings, numbers, times and maps
// with string keys: that cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("dashboard: encoding a snapshot: %v", err))
	}
	return b
}
