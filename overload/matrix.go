package overload

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"sort"
	"sync"
	"time"
)

// Scenario is a row of the matrix.
type Scenario struct {
	Name string
	Kind string  // the handler
	X    float64 // offered load, in multiples of the handler's capacity C
	// Next, if set, makes each request; Metric, if set, reads the
	// scenario's own figure from a result (a share, 0 to 1).
	Next   func(r *rand.Rand, i int) Request
	Metric func(res Result, c float64) float64
	Label  string // what Metric is
	Step   bool   // the capacity halves for the middle third of the run
}

// Scenarios returns the matrix's rows.
func Scenarios() []Scenario {
	var out []Scenario
	for _, k := range []string{NoYield, Yield} {
		for _, x := range []float64{0.8, 1.5, 3, 6} {
			out = append(out, Scenario{Name: fmt.Sprintf("%s-%g", k, x), Kind: k, X: x})
		}
	}
	out = append(out,
		Scenario{Name: "slow-1.5", Kind: Slow, X: 1.5, Label: "fast requests served",
			Next: func(r *rand.Rand, i int) Request {
				if r.IntN(2) == 0 {
					return Request{Path: "/work?slow=1", Class: "slow"}
				}
				return Request{Path: "/work", Class: "fast"}
			},
			Metric: func(res Result, _ float64) float64 { return share(res.ByClass["fast"]) }},
		Scenario{Name: "step-1.5", Kind: NoYield, X: 1.5, Step: true, Label: "worst third, % of its capacity"},
		Scenario{Name: "critical-3", Kind: Yield, X: 3, Label: "critical served",
			Next: func(r *rand.Rand, i int) Request {
				if r.IntN(10) < 3 {
					return Request{Path: "/work", Header: http.Header{"X-Priority": {"critical"}}, Class: "critical"}
				}
				return Request{Path: "/work", Class: "other"}
			},
			Metric: func(res Result, _ float64) float64 { return share(res.ByClass["critical"]) }},
		Scenario{Name: "tenant-3", Kind: Yield, X: 3, Label: "other tenants served",
			Next: func(r *rand.Rand, i int) Request {
				t := "noisy"
				if v := r.IntN(12); v < 2 {
					t = fmt.Sprintf("quiet-%d", v)
				}
				class := "quiet"
				if t == "noisy" {
					class = "noisy"
				}
				return Request{Path: "/work", Header: http.Header{"X-Tenant": {t}}, Class: class}
			},
			Metric: func(res Result, _ float64) float64 { return share(res.ByClass["quiet"]) }},
	)
	return out
}

func share(t *Tally) float64 {
	if t == nil || t.Sent == 0 {
		return 0
	}
	return float64(t.Good) / float64(t.Sent)
}

// Options of a matrix run.
type Options struct {
	Self      string        // the command's own path, run as "serve"
	Procs     int           // the server's GOMAXPROCS
	Dur       time.Duration // measured part of a cell (a step's run is 3 times this)
	Warm      time.Duration // 0.5 C before each measured part
	Runs      int
	Deadline  time.Duration
	Subjects  []string
	Scenarios []Scenario
	Log       io.Writer
	Trace     bool // servers stamp and count their requests (EnableTrace)
}

// Cell is the outcome of one scenario, subject and run.
type Cell struct {
	Scenario, Subject string
	Run               int
	C                 float64 // the handler's capacity, requests per second
	Res               Result
	Thirds            []Result // a step's three parts
}

// Goodput is the cell's 200s within the deadline per second, as a share
// of C.
func (c Cell) Goodput() float64 {
	return float64(c.Res.All.Good) / c.Res.Dur.Seconds() / c.C
}

// server is one server process.
type server struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	base string
}

func startServer(o Options, subject, kind string) (*server, error) {
	args := []string{"serve", "-subject", subject, "-kind", kind}
	if o.Trace {
		args = append(args, "-trace")
	}
	return startProcess(o.Self, o.Procs, args...)
}

// StartServer starts a server process for subject and kind, and returns
// its base URL and a func that stops it.
func StartServer(o Options, subject, kind string) (string, func(), error) {
	s, err := startServer(o, subject, kind)
	if err != nil {
		return "", nil, err
	}
	return s.base, s.stop, nil
}

// stop closes the server's stdin, which ends it, and waits.
func (s *server) stop() {
	s.in.Close()
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// Capacity measures C of a handler kind: the 200s per second of an
// unprotected server under a closed loop of 8 clients for d.
func Capacity(ctx context.Context, o Options, kind string, d time.Duration) (float64, error) {
	s, err := startServer(o, "none", kind)
	if err != nil {
		return 0, err
	}
	defer s.stop()
	c := Client()
	var mu sync.Mutex
	n := 0
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				resp, err := c.Get(s.base + "/work")
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

// RunCell runs one cell: a fresh server, a warm-up at 0.5 C, the load.
func RunCell(ctx context.Context, o Options, sc Scenario, subject string, c float64, run int) (Cell, error) {
	s, err := startServer(o, subject, sc.Kind)
	if err != nil {
		return Cell{}, err
	}
	defer s.stop()
	cl := Client()
	seed := uint64(run)*1000 + 7
	Load{Base: s.base, Rate: 0.5 * c, Dur: o.Warm, Deadline: o.Deadline, MaxOpen: 15000, Next: sc.Next, Seed: seed}.Run(ctx, cl)
	cell := Cell{Scenario: sc.Name, Subject: subject, Run: run, C: c}
	rate := sc.X * c
	if !sc.Step {
		cell.Res = Load{Base: s.base, Rate: rate, Dur: o.Dur, Deadline: o.Deadline, MaxOpen: 15000, Next: sc.Next, Seed: seed + 1}.Run(ctx, cl)
		return cell, nil
	}
	// The step: one load for three times Dur, the capacity halved (each
	// request's CPU doubled) for the middle third; requests are counted
	// by the third they were sent in.
	third := int(rate * o.Dur.Seconds())
	next := func(_ *rand.Rand, i int) Request {
		return Request{Path: "/work", Class: fmt.Sprintf("third-%d", min(i/third, 2))}
	}
	timer := time.AfterFunc(o.Dur, func() { admin(cl, s.base, 2) })
	timer2 := time.AfterFunc(2*o.Dur, func() { admin(cl, s.base, 1) })
	defer timer.Stop()
	defer timer2.Stop()
	cell.Res = Load{Base: s.base, Rate: rate, Dur: 3 * o.Dur, Deadline: o.Deadline, MaxOpen: 15000, Next: next, Seed: seed + 1}.Run(ctx, cl)
	for i := range 3 {
		t := cell.Res.ByClass[fmt.Sprintf("third-%d", i)]
		if t == nil {
			t = &Tally{}
		}
		cell.Thirds = append(cell.Thirds, Result{All: *t, Dur: o.Dur})
	}
	return cell, nil
}

func admin(c *http.Client, base string, factor int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/admin/step?factor=%d", base, factor), nil)
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
	}
}

// Metric returns the scenario's own figure for a cell, and whether it
// has one: its Metric, or for a step the worst third's goodput as a
// share of that third's capacity.
func (sc Scenario) metric(cell Cell) (float64, bool) {
	switch {
	case sc.Step:
		worst := 2.0
		for i, t := range cell.Thirds {
			c := cell.C
			if i == 1 {
				c /= 2
			}
			worst = min(worst, float64(t.All.Good)/t.Dur.Seconds()/c)
		}
		return worst, true
	case sc.Metric != nil:
		return sc.Metric(cell.Res, cell.C), true
	}
	return 0, false
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
