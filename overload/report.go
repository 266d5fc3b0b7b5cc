package overload

import (
	"fmt"
	"io"
	"strings"
)

// Report writes the matrix's tables in Markdown: goodput as a share of C,
// the scenarios' own figures, the p99 of served requests and the share
// shed, each the median over the runs.
func Report(w io.Writer, cells []Cell, scenarios []Scenario, subjects []string) {
	by := map[[2]string][]Cell{}
	for _, c := range cells {
		k := [2]string{c.Scenario, c.Subject}
		by[k] = append(by[k], c)
	}
	table := func(title string, rows []Scenario, cell func(sc Scenario, cs []Cell) (string, bool)) {
		var b strings.Builder
		fmt.Fprintf(&b, "\n%s\n\n| scenario | %s |\n|---|%s\n", title, strings.Join(subjects, " | "), strings.Repeat("---:|", len(subjects)))
		n := 0
		for _, sc := range rows {
			var out []string
			any := false
			for _, s := range subjects {
				v, ok := cell(sc, by[[2]string{sc.Name, s}])
				any = any || ok
				out = append(out, v)
			}
			if any {
				label := sc.Name
				if sc.Label != "" && strings.Contains(title, "own") {
					label += " (" + sc.Label + ")"
				}
				fmt.Fprintf(&b, "| %s | %s |\n", label, strings.Join(out, " | "))
				n++
			}
		}
		if n > 0 {
			io.WriteString(w, b.String())
		}
	}
	med := func(cs []Cell, f func(Cell) (float64, bool)) (float64, int) {
		var v []float64
		for _, c := range cs {
			if x, ok := f(c); ok {
				v = append(v, x)
			}
		}
		return median(v), len(v)
	}
	pct := func(cs []Cell, f func(Cell) (float64, bool)) (string, bool) {
		m, n := med(cs, f)
		if n == 0 {
			return "", false
		}
		return fmt.Sprintf("%.1f", 100*m), true
	}
	table("Goodput, % of C (200s within 1 s, per second)", scenarios, func(sc Scenario, cs []Cell) (string, bool) {
		return pct(cs, func(c Cell) (float64, bool) { return c.Goodput(), true })
	})
	table("The scenarios' own figures, %", scenarios, func(sc Scenario, cs []Cell) (string, bool) {
		return pct(cs, sc.metric)
	})
	table("Refused (503), % of requests sent", scenarios, func(sc Scenario, cs []Cell) (string, bool) {
		return pct(cs, func(c Cell) (float64, bool) {
			if c.Res.All.Sent == 0 {
				return 0, false
			}
			return float64(c.Res.All.Shed) / float64(c.Res.All.Sent), true
		})
	})
	table("p99 of the requests served within 1 s, ms", scenarios, func(sc Scenario, cs []Cell) (string, bool) {
		m, n := med(cs, func(c Cell) (float64, bool) {
			p := c.Res.All.P99()
			return float64(p.Microseconds()) / 1000, p > 0
		})
		if n == 0 {
			return "-", false
		}
		return fmt.Sprintf("%.0f", m), true
	})
}

// Chart writes an SVG bar chart of the goodput table: for each scenario a
// group of bars, one per subject, the median goodput as a share of C.
func Chart(w io.Writer, cells []Cell, scenarios []Scenario, subjects []string) {
	by := map[[2]string][]float64{}
	for _, c := range cells {
		k := [2]string{c.Scenario, c.Subject}
		by[k] = append(by[k], c.Goodput())
	}
	const (
		barW, gap, left, top, plotH = 9, 14, 50, 30, 220
		maxPct                      = 150.0
	)
	colors := []string{"#888888", "#b07aa1", "#e15759", "#4e79a7", "#76b7b2", "#f28e2b", "#edc948", "#59a14f"}
	groupW := barW*len(subjects) + gap
	width := left + groupW*len(scenarios) + 20
	height := top + plotH + 110
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(w, `<text x="%d" y="18" font-size="13">Goodput, %% of C (median of the runs; 200s within 1 s per second)</text>`+"\n", left)
	y := func(pct float64) float64 { return top + plotH - min(pct, maxPct)/maxPct*plotH }
	for _, g := range []float64{0, 50, 100, 150} {
		fmt.Fprintf(w, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%g</text>`+"\n",
			left, width-10, y(g), y(g), left-4, y(g)+4, g)
	}
	for i, sc := range scenarios {
		x0 := left + i*groupW + gap/2
		for j, s := range subjects {
			v, ok := by[[2]string{sc.Name, s}]
			if !ok {
				continue
			}
			pct := 100 * median(append([]float64(nil), v...))
			fmt.Fprintf(w, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s %s: %.1f %%</title></rect>`+"\n",
				x0+j*barW, y(pct), barW-1, float64(top+plotH)-y(pct), colors[j%len(colors)], sc.Name, s, pct)
		}
		fmt.Fprintf(w, `<text transform="translate(%d,%d) rotate(-45)" text-anchor="end">%s</text>`+"\n", x0+groupW/2, top+plotH+14, sc.Name)
	}
	for j, s := range subjects {
		x := left + (j%4)*150
		yy := height - 30 + (j/4)*14
		fmt.Fprintf(w, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", x, yy-9, colors[j%len(colors)], x+14, yy, s)
	}
	fmt.Fprintln(w, "</svg>")
}
