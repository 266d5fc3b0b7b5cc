package loadtest

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// WriteJSON writes the whole report (configuration, summaries, per-second
// timelines, transitions) as indented JSON.
func (r *ExhaustionReport) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// WriteJSON writes the whole report as indented JSON.
func (r *QueueReport) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table is a terminal table: a label column and one right-aligned column per
// run.
type table struct {
	label int
	cols  []string
	rows  [][]string
}

func (t *table) add(label string, cells ...string) {
	t.rows = append(t.rows, append([]string{label}, cells...))
}

func (t *table) write(w io.Writer) error {
	width := 10
	for _, r := range append([][]string{append([]string{""}, t.cols...)}, t.rows...) {
		for _, c := range r[1:] {
			width = max(width, len([]rune(c)))
		}
	}
	var b strings.Builder
	line := func(r []string) {
		fmt.Fprintf(&b, "  %-*s", t.label, r[0])
		for _, c := range r[1:] {
			fmt.Fprintf(&b, "  %*s", width, c)
		}
		b.WriteString("\n")
	}
	line(append([]string{""}, t.cols...))
	for _, r := range t.rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTable writes the summary of every mode as a terminal table.
func (r *ExhaustionReport) WriteTable(w io.Writer) error {
	c := r.cfg
	fmt.Fprintf(w, "Worker exhaustion: %d shop workers; catalog %g/s, payments %g/s with a %s timeout;\n",
		c.Workers, c.CatalogRate, c.PaymentRate, dsecs(c.InvocationTimeout))
	fmt.Fprintf(w, "the supplier hangs from %s to %s of a %s run. Breaker: %d consecutive failures, reset %s; bulkhead %d.\n",
		dsecs(c.OutageStart), dsecs(c.OutageEnd), dsecs(c.Duration), c.Threshold, dsecs(c.ResetTimeout), c.Bulkhead)
	fmt.Fprintf(w, "Transport %s, speed %g; all times are scenario time.\n\n", c.Transport, c.Speed)
	t := &table{label: 44}
	for _, m := range r.Modes {
		t.cols = append(t.cols, string(m.Summary.Mode))
	}
	row := func(label string, cell func(Summary) string) {
		var cells []string
		for _, m := range r.Modes {
			cells = append(cells, cell(m.Summary))
		}
		t.add(label, cells...)
	}
	brk := func(f func(Summary) string) func(Summary) string {
		return func(s Summary) string {
			if !s.HasBreaker {
				return "—"
			}
			return f(s)
		}
	}
	row("all shop workers busy, after outage start", func(s Summary) string { return optSecs(s.ExhaustedAfter, "never") })
	row("breaker opened, after outage start", brk(func(s Summary) string { return optSecs(s.OpenedAfter, "never") }))
	row("  because", brk(func(s Summary) string { return because(s.OpenedBy, c.Threshold) }))
	row("catalog served during the outage", func(s Summary) string { return pct(s.CatalogAvailabilityOutage) })
	row("seconds with < 99 % of catalog served", func(s Summary) string { return fmt.Sprintf("%d s", s.CatalogBadSeconds) })
	row("breaker closed, after supplier healed", brk(func(s Summary) string {
		switch {
		case s.StillOpenAtEnd:
			return "still open"
		case s.Opens == 0:
			return "never opened"
		}
		return optSecs(s.ClosedAfterHeal, "—")
	}))
	row("breaker trips (+ re-opens on failed probe)", brk(func(s Summary) string {
		return fmt.Sprintf("%d (+%d)", s.Cycles, s.FailedProbes)
	}))
	if c.BusinessErrors > 0 {
		row("breaker closed between trips, mean", brk(func(s Summary) string { return optSecs(s.ClosedBetweenTrips, "no trip") }))
	}
	row("most shop workers busy at once", func(s Summary) string { return fmt.Sprintf("%d/%d", s.MaxBusy, c.Workers) })
	row("payments ok / declined", func(s Summary) string { return fmt.Sprintf("%d / %d", s.Payments.OK, s.Payments.Declined) })
	row("payments timed out", func(s Summary) string { return fmt.Sprint(s.Payments.TimedOut) })
	row("payments failed fast (breaker, stuck bulkhead)", func(s Summary) string { return fmt.Sprint(s.Payments.FailedFast) })
	row("payments refused busy (breaker untouched)", func(s Summary) string { return fmt.Sprint(s.Payments.Busy) })
	row("payments refused (no shop worker)", func(s Summary) string { return fmt.Sprint(s.Payments.Refused) })
	if anyMode(r, func(s Summary) bool { return s.Payments.Errors > 0 }) {
		row("payments with transport errors", func(s Summary) string { return fmt.Sprint(s.Payments.Errors) })
	}
	if anyMode(r, func(s Summary) bool { return s.Skipped > 0 }) {
		row("requests skipped (the machine stalled)", func(s Summary) string { return fmt.Sprint(s.Skipped) })
	}
	return t.write(w)
}

func anyMode(r *ExhaustionReport, f func(Summary) bool) bool {
	for _, m := range r.Modes {
		if f(m.Summary) {
			return true
		}
	}
	return false
}

// WriteTimeline writes every mode's per-second timeline.
func (r *ExhaustionReport) WriteTimeline(w io.Writer) error {
	for _, m := range r.Modes {
		fmt.Fprintf(w, "\n%s\n%5s %5s %7s %7s %7s %7s %6s %6s %6s %6s %6s  %s\n", m.Summary.Mode,
			"t", "busy", "cat.ok", "cat.ref", "p50ms", "p99ms", "pay.ok", "t.out", "fast", "refus", "decl", "breaker")
		for _, s := range m.Seconds {
			fmt.Fprintf(w, "%5d %5d %7d %7d %7.1f %7.1f %6d %6d %6d %6d %6d  %s\n", s.T, s.BusyWorkers,
				s.CatalogServed, s.CatalogRefused, s.CatalogP50Ms, s.CatalogP99Ms, s.PaymentsOK,
				s.PaymentsTimedOut, s.PaymentsFailedFast, s.PaymentsRefused, s.PaymentsDeclined, s.Breaker)
		}
	}
	return nil
}

// WriteTable writes the summary of both variants as a terminal table, with
// their first trips.
func (r *QueueReport) WriteTable(w io.Writer) error {
	c := r.cfg
	fmt.Fprintf(w, "Queue: %d places, %g/s in, %g/s out (%s of %s a call); %s run.\n",
		c.Queue, c.ArrivalRate, c.ServiceRate, plural(c.SupplierSlots, "supplier lane"), dsecs(c.serviceTime()), dsecs(c.Duration))
	fmt.Fprintf(w, "Queue timeout %s, reset timeout %s. Transport %s, speed %g; all times are scenario time.\n\n",
		dsecs(c.QueueTimeout), dsecs(c.ResetTimeout), c.Transport, c.Speed)
	t := &table{label: 40}
	for _, run := range r.Runs {
		t.cols = append(t.cols, run.Name)
	}
	row := func(label string, cell func(QueueSummary) string) {
		var cells []string
		for _, run := range r.Runs {
			cells = append(cells, cell(run.Summary))
		}
		t.add(label, cells...)
	}
	row("queue first full after", func(s QueueSummary) string { return optSecs(s.FullAfter, "never") })
	row("breaker trips", func(s QueueSummary) string { return fmt.Sprint(s.Cycles) })
	row("open per trip: mean (min–max)", func(s QueueSummary) string { return stats(s.Open) })
	row("closed between trips: mean (min–max)", func(s QueueSummary) string { return stats(s.Closed) })
	row("time open after the first trip", func(s QueueSummary) string { return pct(s.OpenShareAfterFull) })
	row("calls accepted / refused (of which busy)", func(s QueueSummary) string {
		return fmt.Sprintf("%d / %d (%d)", s.Accepted, s.RejectedOpen+s.RejectedFull+s.RejectedBusy, s.RejectedBusy)
	})
	row("served (rate)", func(s QueueSummary) string { return fmt.Sprintf("%d (%.2f/s)", s.Served, s.ServedPerSecond) })
	row("timed out (in queue / running)", func(s QueueSummary) string { return fmt.Sprintf("%d / %d", s.QueueTimedOut, s.TimedOut) })
	row("wait until served: p50 / p99", func(s QueueSummary) string { return fsecs(s.WaitP50) + " / " + fsecs(s.WaitP99) })
	if r.Runs[0].Summary.Skipped+r.Runs[len(r.Runs)-1].Summary.Skipped > 0 {
		row("arrivals skipped (the machine stalled)", func(s QueueSummary) string { return fmt.Sprint(s.Skipped) })
	}
	if err := t.write(w); err != nil {
		return err
	}
	for _, run := range r.Runs {
		fmt.Fprintf(w, "\n  %s, first trips:\n", run.Name)
		for i, cy := range run.Cycles {
			if i == 5 {
				fmt.Fprintf(w, "    ... %d more (all in the JSON)\n", len(run.Cycles)-i)
				break
			}
			fmt.Fprintf(w, "    at %s: open %s (closed by %s), then closed %s\n", fsecs(cy.OpenedAt),
				optSecs(cy.OpenFor, "to the end"), orDash(cy.ClosedBy), optSecs(cy.ClosedFor, "to the end"))
		}
	}
	return nil
}

// because says a breaker reason in a reader's words.
func because(reason string, threshold int) string {
	switch reason {
	case "":
		return "—"
	case "consecutive-failures":
		return fmt.Sprintf("%d failures in a row", threshold)
	case "saturation":
		return "bulkhead stuck"
	}
	return reason
}

// plural is "1 lane", "2 lanes".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func stats(d DurationStats) string {
	if d.N == 0 {
		return "—"
	}
	return fmt.Sprintf("%s (%s–%s)", fsecs(d.Mean), trimUnit(fsecs(d.Min)), fsecs(d.Max))
}

func trimUnit(s string) string { return strings.TrimSuffix(s, " s") }

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// fsecs formats seconds: three decimals below one second, one above.
func fsecs(v float64) string {
	switch {
	case v == 0:
		return "0 s"
	case v < 1:
		return fmt.Sprintf("%.3f s", v)
	}
	return fmt.Sprintf("%.1f s", v)
}

func optSecs(v *float64, none string) string {
	if v == nil {
		return none
	}
	return fsecs(*v)
}

func pct(v float64) string { return fmt.Sprintf("%.1f %%", 100*v) }

// dsecs formats a duration in seconds, without trailing zeros: "30 s",
// "0.125 s".
func dsecs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s" }
