package loadtest

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The chart's look: one colour and dash pattern per run, so the lines stay
// apart in grey print too.
var (
	palette = []color.Color{
		color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
		color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, // orange
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
	}
	dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, nil}
	widths = []vg.Length{vg.Points(2.5), vg.Points(2), vg.Points(2.5)}
	shade  = color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x38}
)

// SaveChart draws busy shop workers and the share of catalog requests served
// over time, one line per mode, with the outage shaded. The format follows
// the extension of path: .png or .svg.
func (r *ExhaustionReport) SaveChart(path string) error {
	c := r.cfg
	// Room above the lines for the legend: the values never exceed Workers.
	busy := newPanel(fmt.Sprintf("Busy shop workers (of %d)", c.Workers), 0, float64(c.Workers)*1.55, float64(c.Workers))
	busy.Title.Text = fmt.Sprintf("Payments hang from %s to %s: %d shop workers, payments %g/s with a %s timeout\n\n%s",
		dsecs(c.OutageStart), dsecs(c.OutageEnd), c.Workers, c.PaymentRate, dsecs(c.InvocationTimeout), busy.Title.Text)
	cat := newPanel("Catalog requests served (% of each second's)", 0, 105, 100)
	cat.X.Label.Text = fmt.Sprintf("scenario time (s)    %s transport, speed %g", c.Transport, c.Speed)
	label := fmt.Sprintf("supplier hung (%s to %s)", dsecs(c.OutageStart), dsecs(c.OutageEnd))
	for _, p := range []*plot.Plot{busy, cat} {
		setTimeAxis(p, c.Duration.Seconds())
		if err := addShade(p, c.OutageStart.Seconds(), c.OutageEnd.Seconds(), label); err != nil {
			return err
		}
		label = ""
	}
	for i, m := range r.Modes {
		bxy, cxy := make(plotter.XYs, len(m.Seconds)), make(plotter.XYs, len(m.Seconds))
		for j, s := range m.Seconds {
			bxy[j] = plotter.XY{X: float64(s.T), Y: float64(s.BusyWorkers)}
			cxy[j] = plotter.XY{X: float64(s.T), Y: 100 * s.CatalogSuccess()}
		}
		if err := addLine(busy, bxy, i, modeLabel(m.Summary, c.Threshold)); err != nil {
			return err
		}
		if err := addLine(cat, cxy, i, ""); err != nil {
			return err
		}
	}
	busy.Legend.Top, busy.Legend.Left = true, false
	return save(path, vg.Inch*10, vg.Inch*7, []*plot.Plot{busy, cat})
}

// modeLabel names a mode in the legend with the number that matters.
func modeLabel(s Summary, threshold int) string {
	switch {
	case s.OpenedAfter != nil:
		return fmt.Sprintf("%s: opens %s into the outage (%s)", s.Mode, fsecs(*s.OpenedAfter), because(s.OpenedBy, threshold))
	case s.ExhaustedAfter != nil:
		return fmt.Sprintf("%s only: all workers busy %s into the outage", s.Mode, fsecs(*s.ExhaustedAfter))
	case s.HasBreaker:
		return fmt.Sprintf("%s: breaker never opens", s.Mode)
	}
	return fmt.Sprintf("%s: workers never all busy", s.Mode)
}

// SaveChart draws the queue length, the share of each second the breaker
// refused calls, and the trips so far, one line per variant. The format
// follows the extension of path: .png or .svg.
func (r *QueueReport) SaveChart(path string) error {
	c := r.cfg
	q := newPanel(fmt.Sprintf("Queue length (of %d; dotted: the low-water marks)", c.Queue), 0, float64(c.Queue)*1.45, float64(c.Queue))
	q.Title.Text = fmt.Sprintf("A queue of %d fed at %g/s, drained at %g/s\n\n%s", c.Queue, c.ArrivalRate, c.ServiceRate, q.Title.Text)
	open := newPanel("Breaker refusing calls (% of each second)", 0, 105, 100)
	trips := newPanel("Breaker trips so far", 0, 0, 0)
	trips.X.Label.Text = fmt.Sprintf("scenario time (s)    %s transport, speed %g", c.Transport, c.Speed)
	for _, p := range []*plot.Plot{q, open, trips} {
		setTimeAxis(p, c.Duration.Seconds())
	}
	for i, run := range r.Runs {
		qxy, oxy := make(plotter.XYs, len(run.Seconds)), make(plotter.XYs, len(run.Seconds))
		for j, s := range run.Seconds {
			qxy[j] = plotter.XY{X: float64(s.T), Y: float64(s.QueueMax)}
			oxy[j] = plotter.XY{X: float64(s.T), Y: 100 * s.OpenShare}
		}
		txy := plotter.XYs{{X: 0, Y: 0}}
		for k, cy := range run.Cycles {
			txy = append(txy, plotter.XY{X: cy.OpenedAt, Y: float64(k + 1)})
		}
		txy = append(txy, plotter.XY{X: c.Duration.Seconds(), Y: float64(len(run.Cycles))})
		label := fmt.Sprintf("%s: %d trips", run.Name, run.Summary.Cycles)
		if s := run.Summary.Open; s.N > 0 {
			label += ", open " + fsecs(s.Mean) + " each"
		}
		ci := 2 * i // blue and red: the two variants
		for _, l := range []struct {
			p   *plot.Plot
			xy  plotter.XYs
			lbl string
		}{{q, qxy, label}, {open, oxy, ""}, {trips, txy, ""}} {
			if err := addLine(l.p, l.xy, ci, l.lbl); err != nil {
				return err
			}
		}
		if err := addLevel(q, float64(run.LowWater), c.Duration.Seconds(), palette[ci]); err != nil {
			return err
		}
	}
	q.Legend.Top, q.Legend.Left = true, false
	return save(path, vg.Inch*10, vg.Inch*8.5, []*plot.Plot{q, open, trips})
}

// newPanel makes a panel whose y axis spans [ymin, ymax] with ticks up to
// top only (the room above is the legend's); ymax 0 lets the data decide.
func newPanel(title string, ymin, ymax, top float64) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(12)
	if ymax > ymin {
		p.Y.Min, p.Y.Max = ymin, ymax
		p.Y.Tick.Marker = ticks(top, niceStep(top/4), "")
	}
	p.Add(plotter.NewGrid())
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Padding = vg.Points(2)
	return p
}

// setTimeAxis spans the x axis over a run of d seconds with round ticks.
func setTimeAxis(p *plot.Plot, d float64) {
	p.X.Min, p.X.Max = 0, d
	p.X.Tick.Marker = ticks(d, niceStep(d/8), " s")
}

// ticks labels 0, step, 2·step, ... up to top.
func ticks(top, step float64, unit string) plot.ConstantTicks {
	var ts plot.ConstantTicks
	for v := 0.0; v <= top+step/1e6; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64) + unit})
	}
	return ts
}

// niceStep rounds a tick step up to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*pow >= raw {
			return m * pow
		}
	}
	return 10 * pow
}

// addLine adds one run's per-second values as a step line.
func addLine(p *plot.Plot, xy plotter.XYs, i int, label string) error {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.StepStyle = plotter.PostStep
	l.LineStyle.Color = palette[i%len(palette)]
	l.LineStyle.Width = widths[i%len(widths)]
	l.LineStyle.Dashes = dashes[i%len(dashes)]
	p.Add(l)
	if label != "" {
		p.Legend.Add(label, l)
	}
	return nil
}

// addShade greys the time window [from, to) across the panel.
func addShade(p *plot.Plot, from, to float64, label string) error {
	if to <= from {
		return nil
	}
	poly, err := plotter.NewPolygon(plotter.XYs{{X: from, Y: p.Y.Min}, {X: to, Y: p.Y.Min}, {X: to, Y: p.Y.Max}, {X: from, Y: p.Y.Max}})
	if err != nil {
		return err
	}
	poly.Color = shade
	poly.LineStyle.Width = 0
	p.Add(poly)
	if label != "" {
		p.Legend.Add(label, poly)
	}
	return nil
}

// addLevel draws a dotted horizontal line at y.
func addLevel(p *plot.Plot, y, xmax float64, c color.Color) error {
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: y}, {X: xmax, Y: y}})
	if err != nil {
		return err
	}
	l.LineStyle.Color = c
	l.LineStyle.Width = vg.Points(1)
	l.LineStyle.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
	p.Add(l)
	return nil
}

// save stacks the panels vertically and writes them to path.
func save(path string, w, h vg.Length, panels []*plot.Plot) error {
	rows := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadX: vg.Millimeter, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	var canvas interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))
		canvas = vgimg.PngCanvas{Canvas: img}
	case ".svg":
		canvas = vgsvg.New(w, h)
	default:
		return errors.New("loadtest: chart path must end in .png or .svg, got " + path)
	}
	dc := draw.New(canvas)
	for i, c := range plot.Align(rows, tiles, dc) {
		panels[i].Draw(c[0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := canvas.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
