package loadtest

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// NamedRun is one run of a capacity scenario, for its chart.
type NamedRun struct {
	Name string
	Run  CapacityRun
}

// SaveCapacityChart draws the bulkhead's size (every 100 ms) and the
// goodput (every second) of each run of scenario s. The format follows the
// extension of path: .png or .svg.
func SaveCapacityChart(path string, s CapacityScenario, runs []NamedRun) error {
	d := s.Duration.Seconds()
	top := 0.0
	for _, r := range runs {
		for _, l := range r.Run.Limits {
			top = max(top, float64(l))
		}
	}
	limit := newPanel("Bulkhead slots (the adaptive limit, or Slots)", 0, top*1.35, top)
	limit.Title.Text = s.Name + "\n\n" + limit.Title.Text
	good := newPanel("Goodput: successes within 2 × the healthy p99, per second", 0, 0, 0)
	good.X.Label.Text = "time (s)"
	for _, p := range []*plot.Plot{limit, good} {
		setTimeAxis(p, d)
	}
	for i, r := range runs {
		lxy := make(plotter.XYs, len(r.Run.Limits))
		for j, l := range r.Run.Limits {
			lxy[j] = plotter.XY{X: float64(j+1) * capSample.Seconds(), Y: float64(l)}
		}
		gxy := make(plotter.XYs, 0, len(r.Run.PerSecond))
		for j, n := range r.Run.PerSecond {
			if float64(j) < d {
				gxy = append(gxy, plotter.XY{X: float64(j), Y: float64(n)})
			}
		}
		label := fmt.Sprintf("%s: %.0f/s", r.Name, r.Run.Goodput)
		if err := addLine(limit, lxy, 2*i, label); err != nil {
			return err
		}
		if err := addLine(good, gxy, 2*i, ""); err != nil {
			return err
		}
	}
	limit.Legend.Top, limit.Legend.Left = true, false
	return save(path, vg.Inch*10, vg.Inch*7, []*plot.Plot{limit, good})
}
