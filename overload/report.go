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
