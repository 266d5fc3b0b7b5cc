package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fusebox-go/fusebox/loadtest"
)

const aboutAdaptive = `A supplier with finite capacity (32 servers of 20 ms, a queue beyond them)
behind an adaptive bulkhead and a fixed one of -workers slots, in real time,
in process: the chart shows the limit following the supplier and the goodput
of both. -scenario picks one of the scenarios of docs/adaptive.md:
  A steady at 70 %   B 2× overload   C capacity 32 → 8 → 32 (the default)
  D latency ×4       E 10× bursts    F a hang at 10 s`

func runAdaptive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out, format, scenario string
	var workers int
	fs := newFlagSet("adaptive", aboutAdaptive, stderr)
	fs.StringVar(&out, "out", "../out", "directory for the chart (created if missing)")
	fs.StringVar(&format, "format", "png", "chart format: png or svg")
	fs.StringVar(&scenario, "scenario", "C", "A, B, C, D, E or F")
	fs.IntVar(&workers, "workers", 32, "the fixed bulkhead's slots")
	if err := parse(fs, args); err != nil {
		return err
	}
	var s loadtest.CapacityScenario
	for _, c := range loadtest.CapacityScenarios() {
		if strings.EqualFold(c.Name[:1], scenario) {
			s = c
		}
	}
	if s.Name == "" || workers < 1 {
		return usageError{fmt.Errorf("-scenario must be one of A–F and -workers ≥ 1, got %q and %d", scenario, workers)}
	}
	fmt.Fprintf(stderr, "running %s twice, %v each, in real time\n", s.Name, s.Duration)
	var runs []loadtest.NamedRun
	for _, z := range []loadtest.Sizing{{Workers: 20, Adaptive: true}, {Workers: workers}} {
		r, err := loadtest.RunCapacity(ctx, s, z)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("fixed %d", workers)
		if z.Adaptive {
			name = "adaptive (from 20, at most 256)"
		}
		fmt.Fprintf(stdout, "%-32s goodput %6.0f/s  busy refusals %6d  openings %d\n", name, r.Goodput, r.Refused, r.Opens)
		runs = append(runs, loadtest.NamedRun{Name: name, Run: r})
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(out, "adaptive."+format)
	if err := loadtest.SaveCapacityChart(path, s, runs); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "chart:", path)
	return nil
}
