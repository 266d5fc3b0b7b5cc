package loadtest

import (
	"fmt"
	"io"
	"strconv"
	"time"
)

// WriteTable writes the runs of the scenario side by side.
func (r *PolicyReport) WriteTable(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "%s: %s\n", r.Scenario, r.About); err != nil {
		return err
	}
	t := table{label: 28}
	for _, run := range r.Runs {
		t.cols = append(t.cols, run.Name)
	}
	row := func(label string, cell func(PolicyRun) string) {
		cells := make([]string, len(r.Runs))
		for i, run := range r.Runs {
			cells[i] = cell(run)
		}
		t.add(label, cells...)
	}
	row("callers' calls", func(p PolicyRun) string { return strconv.FormatInt(p.Calls, 10) })
	row("succeeded", func(p PolicyRun) string { return fmt.Sprintf("%.1f %%", 100*p.Success()) })
	row("calls reaching the supplier", func(p PolicyRun) string { return strconv.FormatInt(p.Reached, 10) })
	row("supplier load / callers'", func(p PolicyRun) string { return fmt.Sprintf("%.3f×", p.Load) })
	row("callers' p50", func(p PolicyRun) string { return msText(p.P50) })
	row("callers' p99", func(p PolicyRun) string { return msText(p.P99) })
	row("retries", func(p PolicyRun) string { return strconv.FormatUint(p.Retries, 10) })
	row("hedges (won)", func(p PolicyRun) string { return fmt.Sprintf("%d (%d)", p.Hedges, p.HedgesWon) })
	row("refused by the budget", func(p PolicyRun) string { return strconv.FormatUint(p.BudgetRefused, 10) })
	if err := t.write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

// WriteJSON writes the report as indented JSON.
func (r *PolicyReport) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

func msText(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
