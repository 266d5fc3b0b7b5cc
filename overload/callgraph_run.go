package overload

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/shed"
)

// GraphOptions of a call-graph run.
type GraphOptions struct {
	Self          string        // the command's own path, run as "backend" and "frontend"
	BackendProcs  int           // the backend's GOMAXPROCS
	FrontendProcs int           // the frontend's GOMAXPROCS; 0 leaves it to the runtime
	Kind          string        // the backend's handler (NoYield or Yield)
	Dur           time.Duration // measured part of a cell
	Warm          time.Duration // 0.5 C before it
	Deadline      time.Duration // the edge's, per request
	Critical      float64       // share of checkout requests, 0 to 1
}

// GraphCell is the outcome of one subject, offered load and run.
type GraphCell struct {
	Subject string
	X       float64 // offered load in multiples of C
	Run     int
	C       float64         // requests per second
	Res     Result          // at the edge, by class Checkout and Recs
	Backend BackendCounts   // of the measured part; see Counted
	Counted bool            // false: the backend did not answer for its counts in time
	Front   json.RawMessage // the frontend's FrontCounts of the measured part (its executors' Stats since it started)
	// CPU used in the measured part, in cores (CPU seconds a second): the
	// edge (this process), the frontend and the backend; NaN where the
	// system does not say (Linux's /proc and getrusage do).
	CPU  [3]float64
	Shed json.RawMessage // the backend's /admin/shed
}

// Share returns the share of class's requests answered 200 within the
// deadline at the edge.
func (c GraphCell) Share(class string) float64 { return share(c.Res.ByClass[class]) }

// Admitted returns what the backend admitted per second, as a share of
// C; NaN if it was not counted.
func (c GraphCell) Admitted() float64 { return c.perC(c.Backend.Admitted) }

// Arrived returns what reached the backend per second, as a share of C;
// NaN if it was not counted.
func (c GraphCell) Arrived() float64 { return c.perC(c.Backend.Arrived) }

func (c GraphCell) perC(n uint64) float64 {
	if !c.Counted {
		return math.NaN()
	}
	return float64(n) / c.Res.Dur.Seconds() / c.C
}

// startProcess runs self with args, GOMAXPROCS=procs (0: unset), and
// waits for its "listening ADDR" line.
func startProcess(self string, procs int, args ...string) (*server, error) {
	cmd := exec.Command(self, args...)
	cmd.Env = os.Environ()
	if procs > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("GOMAXPROCS=%d", procs))
	}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		in.Close()
		cmd.Wait()
		return nil, fmt.Errorf("overload: %v did not start: %q %v", args, line, err)
	}
	return &server{cmd: cmd, in: in, base: "http://" + addr}, nil
}

// graph is the backend and frontend processes of one cell.
type graph struct{ back, front *server }

func startGraph(o GraphOptions, subject string) (*graph, error) {
	back, err := startProcess(o.Self, o.BackendProcs, "backend", "-subject", subject, "-kind", o.Kind)
	if err != nil {
		return nil, err
	}
	front, err := startProcess(o.Self, o.FrontendProcs, "frontend", "-subject", subject, "-backend", back.base)
	if err != nil {
		back.stop()
		return nil, err
	}
	return &graph{back: back, front: front}, nil
}

func (g *graph) stop() {
	g.front.stop()
	g.back.stop()
}

// GraphCapacity measures C: the 200s per second at the edge of the
// unprotected graph under a closed loop of 8 clients for d.
func GraphCapacity(ctx context.Context, o GraphOptions, d time.Duration) (float64, error) {
	g, err := startGraph(o, "none")
	if err != nil {
		return 0, err
	}
	defer g.stop()
	c := Client()
	defer c.CloseIdleConnections()
	var mu sync.Mutex
	n := 0
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				resp, err := c.Get(g.front.base + "/" + Recs)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					mu.Lock()
					n++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return float64(n) / d.Seconds(), nil
}

// GraphMix returns the edge's requests: a share critical of checkout, the
// rest recommendations.
func GraphMix(critical float64) func(r *rand.Rand, i int) Request {
	return func(r *rand.Rand, _ int) Request {
		if r.Float64() < critical {
			return Request{Path: "/" + Checkout, Class: Checkout}
		}
		return Request{Path: "/" + Recs, Class: Recs}
	}
}

// RunGraphCell runs one cell: fresh processes, a warm-up at 0.5 C, then
// x × C for o.Dur, counting at the backend what the measured part sent.
func RunGraphCell(ctx context.Context, o GraphOptions, subject string, x, c float64, run int) (GraphCell, error) {
	g, err := startGraph(o, subject)
	if err != nil {
		return GraphCell{}, err
	}
	defer g.stop()
	cl := Client()
	defer cl.CloseIdleConnections()
	seed := uint64(run)*1000 + 43
	mix := GraphMix(o.Critical)
	Load{Base: g.front.base, Rate: 0.5 * c, Dur: o.Warm, Deadline: o.Deadline, MaxOpen: 15000, Next: mix, Seed: seed}.Run(ctx, cl)
	before, err := getJSON[BackendCounts](ctx, cl, g.back.base+"/admin/counts")
	if err != nil {
		return GraphCell{}, err
	}
	frontBefore, err := getJSON[FrontCounts](ctx, cl, g.front.base+"/admin/stats")
	if err != nil {
		return GraphCell{}, err
	}
	cell := GraphCell{Subject: subject, X: x, Run: run, C: c}
	cpu0 := g.cpu()
	cell.Res = Load{Base: g.front.base, Rate: x * c, Dur: o.Dur, Deadline: o.Deadline, MaxOpen: 15000, Next: mix, Seed: seed + 1}.Run(ctx, cl)
	cpu1 := g.cpu()
	for i := range cell.CPU {
		cell.CPU[i] = (cpu1[i] - cpu0[i]) / cell.Res.Dur.Seconds()
	}
	// A backend that queued every request answers this one behind them
	// all: past the timeout, the cell is kept without its counts.
	if after, err := getJSON[BackendCounts](ctx, cl, g.back.base+"/admin/counts"); err == nil {
		cell.Backend = BackendCounts{Arrived: after.Arrived - before.Arrived, Admitted: after.Admitted - before.Admitted, Conns: after.Conns - before.Conns}
		cell.Counted = true
	}
	if fc, err := getJSON[FrontCounts](ctx, cl, g.front.base+"/admin/stats"); err == nil {
		fc.since(frontBefore)
		cell.Front, _ = json.Marshal(fc)
	}
	cell.Shed, _ = getJSON[json.RawMessage](ctx, cl, g.back.base+"/admin/shed")
	return cell, nil
}

// cpu returns the CPU seconds used so far by this process (the edge),
// the frontend and the backend, NaN where unknown.
func (g *graph) cpu() [3]float64 {
	return [3]float64{selfCPU(), procCPU(g.front.cmd.Process.Pid), procCPU(g.back.cmd.Process.Pid)}
}

// procCPU returns the user and system CPU seconds of process pid, from
// /proc/PID/stat (in clock ticks, 100 a second on Linux); NaN if unknown.
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return math.NaN()
	}
	// Fields after the command name, which is in parentheses and may
	// hold spaces: state is the 3rd field, utime the 14th, stime the 15th.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return math.NaN()
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return math.NaN()
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return math.NaN()
	}
	return float64(u+st) / 100
}

func getJSON[T any](ctx context.Context, c *http.Client, url string) (T, error) {
	var v T
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return v, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return v, fmt.Errorf("overload: %s: %w", url, err)
	}
	return v, nil
}

// GraphReport writes the call graph's table in Markdown: one row per
// subject and offered load, each figure the median over the runs.
func GraphReport(w io.Writer, cells []GraphCell) {
	type key struct {
		subject string
		x       float64
	}
	by := map[key][]GraphCell{}
	var keys []key
	for _, c := range cells {
		k := key{c.Subject, c.X}
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], c)
	}
	med := func(cs []GraphCell, f func(GraphCell) float64) float64 {
		var v []float64
		for _, c := range cs {
			if x := f(c); !math.IsNaN(x) {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			return math.NaN()
		}
		return median(v)
	}
	fmt.Fprintf(w, "\n| protection | offered | checkout (critical) served | recommendations (sheddable) served | backend admitted ÷ C | reaching backend ÷ C | runs |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, k := range keys {
		cs := by[k]
		fmt.Fprintf(w, "| %s | %g × C | %.1f %% | %.1f %% | %.2f | %.2f | %d |\n", k.subject, k.x,
			100*med(cs, func(c GraphCell) float64 { return c.Share(Checkout) }),
			100*med(cs, func(c GraphCell) float64 { return c.Share(Recs) }),
			med(cs, GraphCell.Admitted), med(cs, GraphCell.Arrived), len(cs))
	}
	for _, c := range cells {
		if !c.Counted {
			fmt.Fprintf(w, "\nNaN: no cell of the row had the backend's counts (it did not answer for them within 20 s of the load's end); a median is over the cells that had them.\n")
			break
		}
	}
}

// Diagnosis says in one line per supplier where the frontend refused
// calls, and what the backend's shedder saw.
func (c GraphCell) Diagnosis() string {
	var b strings.Builder
	var fc FrontCounts
	if json.Unmarshal(c.Front, &fc) == nil {
		fmt.Fprintf(&b, "  frontend: accepted %d connections, dialled %d; calls by outcome %v\n", fc.Accepted, fc.Dials, fc.Routes)
		for _, name := range slices.Sorted(maps.Keys(fc.Executors)) {
			st := fc.Executors[name]
			fmt.Fprintf(&b, "  frontend %s: ok %d failed %d (timeouts %d) ignored %d; refused %+v, by priority %v; breaker opens by reason %v\n",
				name, st.Successes, st.Failures, st.Timeouts, st.Ignored, st.Rejected, st.RejectedByPriority, st.Breaker.Transitions)
		}
	}
	var sh shed.Stats
	if json.Unmarshal(c.Shed, &sh) == nil && sh.Capacity > 0 {
		fmt.Fprintf(&b, "  backend shedder: admitted %d, shed by priority %v, by reason %v, capacity %.0f/s, delay %v, overload %v\n",
			sh.Admitted, sh.Shed, sh.ByReason, sh.Capacity, sh.Delay, sh.Overload)
	}
	if c.Counted {
		fmt.Fprintf(&b, "  backend: accepted %d connections\n", c.Backend.Conns)
	}
	return b.String()
}

// lossColumns are the outcomes of GraphLosses, in the order of its
// columns: the frontend's (see outcome) and the edge's own.
var lossColumns = []string{"refused throttled", "refused busy", "refused saturated", "refused open", "refused gozero",
	"backend 503", "timeout", "cancelled", "error"}

// GraphLosses writes, per subject and offered load, where the checkout
// requests that were not served were lost, summed over the runs: refused
// by the frontend (by reason), shed by the backend, timed out or given
// up, or late at the edge; the backend's accepted connections per cell
// and the CPU each process used, in cores (medians).
func GraphLosses(w io.Writer, cells []GraphCell) {
	type key struct {
		subject string
		x       float64
	}
	type row struct {
		sent, good, late, failed, runs int
		out                            map[string]uint64
		conns                          []float64
		cpu                            [3][]float64
	}
	rows := map[key]*row{}
	var keys []key
	for _, c := range cells {
		k := key{c.Subject, c.X}
		r := rows[k]
		if r == nil {
			r = &row{out: map[string]uint64{}}
			rows[k] = r
			keys = append(keys, k)
		}
		t := c.Res.ByClass[Checkout]
		if t == nil {
			t = &Tally{}
		}
		r.runs++
		r.sent += t.Sent
		r.good += t.Good
		r.late += t.Late
		r.failed += t.Failed + t.NotSent
		var fc FrontCounts
		if json.Unmarshal(c.Front, &fc) == nil {
			for o, n := range fc.Routes[Checkout] {
				r.out[o] += n
			}
		}
		if c.Counted {
			r.conns = append(r.conns, float64(c.Backend.Conns))
		}
		for i, v := range c.CPU {
			if !math.IsNaN(v) {
				r.cpu[i] = append(r.cpu[i], v)
			}
		}
	}
	med := func(v []float64) float64 {
		if len(v) == 0 {
			return math.NaN()
		}
		return median(v)
	}
	fmt.Fprintf(w, "\n| protection | offered | checkouts sent | served | refused by the frontend: throttled / busy / saturated / open | go-zero's breaker | shed by the backend (503) | frontend timeout | given up by the edge | connection errors | late or failed at the edge | backend connections a cell | CPU cores: edge / frontend / backend |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, k := range keys {
		r := rows[k]
		o := r.out
		fmt.Fprintf(w, "| %s | %g × C | %d | %d | %d / %d / %d / %d | %d | %d | %d | %d | %d | %d | %.0f | %.2f / %.2f / %.2f |\n", k.subject, k.x, r.sent, r.good,
			o[lossColumns[0]], o[lossColumns[1]], o[lossColumns[2]], o[lossColumns[3]], o[lossColumns[4]],
			o[lossColumns[5]], o[lossColumns[6]], o[lossColumns[7]], o[lossColumns[8]], r.late+r.failed, med(r.conns),
			med(r.cpu[0]), med(r.cpu[1]), med(r.cpu[2]))
	}
}
