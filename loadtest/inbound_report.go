package loadtest

import (
	"fmt"
	"io"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/fusebox-go/fusebox/priority"
)

// RouteReport is what one route saw in one run.
type RouteReport struct {
	Path string `json:"path"`
	Sent int    `json:"sent"`
	// Served, Shed (503) and TimedOut (the client gave up at its timeout)
	// count the requests by result; ByPriority splits them by priority.
	Served             int `json:"served"`
	Shed               int `json:"shed"`
	ShedWithRetryAfter int `json:"shed_with_retry_after"`
	TimedOut           int `json:"timed_out"`
	Other              int `json:"other"`
	// ByPriority counts sent and served requests by priority, indexed by
	// priority.Priority.
	ByPriority [priority.Levels]PriorityCounts `json:"by_priority"`
	// HealthyP99 is the 99th percentile of the latency of the requests
	// served while the supplier was healthy, LoadedP99 of those served
	// after; P50 of all served.
	HealthyP99 time.Duration `json:"healthy_p99_ns"`
	LoadedP99  time.Duration `json:"loaded_p99_ns"`
	P50        time.Duration `json:"p50_ns"`
	// BreakerOpenedAt is when the route's breaker first opened (scenario
	// seconds), nil if it never did or there was none.
	BreakerOpenedAt *float64 `json:"breaker_opened_at_s"`
	BreakerReason   string   `json:"breaker_reason,omitempty"` // why it first opened
	// Seconds are the route's requests by second of arrival.
	Seconds []RouteSecond `json:"seconds"`
}

// PriorityCounts counts the requests of one priority.
type PriorityCounts struct {
	Sent     int `json:"sent"`
	Served   int `json:"served"`
	Shed     int `json:"shed"`
	TimedOut int `json:"timed_out"`
}

// RouteSecond is one second of a route's requests, by arrival.
type RouteSecond struct {
	Served, Shed, TimedOut int
}

// ServedShare is the share of the sent requests that were served.
func (r RouteReport) ServedShare() float64 {
	if r.Sent == 0 {
		return 0
	}
	return float64(r.Served) / float64(r.Sent)
}

// report turns the accumulators into reports.
func (e *engine) report() []RouteReport {
	out := make([]RouteReport, len(e.spec.routes))
	for i, r := range e.spec.routes {
		a := &e.acc[i]
		rr := RouteReport{Path: r.path, ShedWithRetryAfter: a.retryAfter,
			HealthyP99: quantile(a.healthy, 0.99), LoadedP99: quantile(a.loaded, 0.99),
			P50: quantile(append(append([]time.Duration(nil), a.healthy...), a.loaded...), 0.5)}
		for p, c := range a.byPriority {
			for res, n := range c {
				rr.ByPriority[p].Sent += n
				rr.Sent += n
				switch res {
				case resServed:
					rr.Served += n
					rr.ByPriority[p].Served += n
				case resShed:
					rr.Shed += n
					rr.ByPriority[p].Shed += n
				case resTimedOut:
					rr.TimedOut += n
					rr.ByPriority[p].TimedOut += n
				default:
					rr.Other += n
				}
			}
		}
		if a.opened {
			s := a.firstOpenAt.Seconds()
			rr.BreakerOpenedAt = &s
			rr.BreakerReason = a.openReason.String()
		}
		for _, s := range a.secs {
			rr.Seconds = append(rr.Seconds, RouteSecond{Served: s[resServed], Shed: s[resShed], TimedOut: s[resTimedOut]})
		}
		out[i] = rr
	}
	return out
}

// WriteJSON writes the whole report as indented JSON.
func (r *InboundReport) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// WriteTable writes every run's routes side by side: for the inbound
// scenario the results of each route, for the priorities scenario the
// share of each priority served.
func (r *InboundReport) WriteTable(w io.Writer) error {
	t := &table{label: 34}
	for _, run := range r.Runs {
		t.cols = append(t.cols, run.Name)
	}
	row := func(label string, cell func(InboundRun) string) {
		var cells []string
		for _, run := range r.Runs {
			cells = append(cells, cell(run))
		}
		t.add(label, cells...)
	}
	if r.Scenario == "priorities" {
		fmt.Fprintf(w, "Priorities: one route, 3x what its slots serve, for %s; served share by priority.\n\n", dsecs(r.Duration))
		for _, p := range []priority.Priority{priority.Critical, priority.Default, priority.Sheddable} {
			row(fmt.Sprintf("/api %s served", p), func(run InboundRun) string {
				c := run.Route("/api").ByPriority[p]
				return fmt.Sprintf("%s of %d", pct(share(c.Served, c.Sent)), c.Sent)
			})
			row(fmt.Sprintf("/api %s shed / timed out", p), func(run InboundRun) string {
				c := run.Route("/api").ByPriority[p]
				return fmt.Sprintf("%d / %d", c.Shed, c.TimedOut)
			})
		}
		return t.write(w)
	}
	fmt.Fprintf(w, "Inbound: %d workers; /search's supplier slows down from %s to %s between %s and %s; %s run.\n\n",
		r.Workers, msStr(r.SupplierFast), msStr(r.SupplierSlow), dsecs(r.SlowStart), dsecs(r.SlowEnd), dsecs(r.Duration))
	for _, path := range []string{"/home", "/search"} {
		row(path+" served", func(run InboundRun) string { return pct(run.Route(path).ServedShare()) })
		row(path+" shed (503)", func(run InboundRun) string { rr := run.Route(path); return pct(share(rr.Shed, rr.Sent)) })
		row(path+" 503 with Retry-After", func(run InboundRun) string {
			rr := run.Route(path)
			return fmt.Sprintf("%d of %d", rr.ShedWithRetryAfter, rr.Shed)
		})
		row(path+" timed out at the client", func(run InboundRun) string {
			rr := run.Route(path)
			return pct(share(rr.TimedOut, rr.Sent))
		})
		row(path+" p99 healthy / loaded", func(run InboundRun) string {
			rr := run.Route(path)
			return msStr(rr.HealthyP99) + " / " + msStr(rr.LoadedP99)
		})
	}
	row("/search breaker first opened", func(run InboundRun) string {
		rr := run.Route("/search")
		if rr.BreakerOpenedAt == nil {
			return "-"
		}
		return fmt.Sprintf("%s (%s)", fsecs(*rr.BreakerOpenedAt), rr.BreakerReason)
	})
	row("busy workers, most", func(run InboundRun) string { return fmt.Sprint(maxInt(run.BusyWorkers)) })
	return t.write(w)
}

func msStr(d time.Duration) string { return fmt.Sprintf("%.0f ms", ms(d)) }

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// SaveChart draws, one line per run, the service's busy workers and the
// share of each second's requests served (/home for the inbound scenario,
// each priority for the priorities one). The format follows the extension
// of path: .png or .svg.
func (r *InboundReport) SaveChart(path string) error {
	d := r.Duration.Seconds()
	busy := newPanel(fmt.Sprintf("Busy service workers (of %d)", r.Workers), 0, float64(r.Workers)*1.45, float64(r.Workers))
	served := newPanel("Requests served (% of each second's)", 0, 130, 100)
	served.X.Label.Text = "scenario time (s)"
	for _, p := range []*plot.Plot{busy, served} {
		setTimeAxis(p, d)
		if err := addShade(p, r.SlowStart.Seconds(), r.SlowEnd.Seconds(), ""); err != nil {
			return err
		}
	}
	i := 0
	for _, run := range r.Runs {
		bxy := make(plotter.XYs, len(run.BusyWorkers))
		for s, b := range run.BusyWorkers {
			bxy[s] = plotter.XY{X: float64(s), Y: float64(b)}
		}
		if err := addLine(busy, bxy, i, run.Name); err != nil {
			return err
		}
		for _, rr := range run.Routes {
			if r.Scenario == "inbound" && rr.Path != "/home" {
				continue
			}
			sxy := make(plotter.XYs, len(rr.Seconds))
			for s, sec := range rr.Seconds {
				sxy[s] = plotter.XY{X: float64(s), Y: 100 * share(sec.Served, sec.Served+sec.Shed+sec.TimedOut)}
			}
			if err := addLine(served, sxy, i, run.Name+" "+rr.Path); err != nil {
				return err
			}
		}
		i++
	}
	busy.Legend.Top, served.Legend.Top = true, true
	return save(path, vg.Inch*10, vg.Inch*7, []*plot.Plot{busy, served})
}
