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

const aboutAdaptive = `A supplier with finite capacity (32 servers of 20 ms, a queue beyond them),
an HTTP server on 127.0.0.1, called through fusehttp with an adaptive
bulkhead and then with a fixed one of -workers slots, in real time: the
chart shows the limit following the supplier and the goodput of both
(-inprocess: function calls instead of HTTP). -scenario picks one of the scenarios of docs/adaptive.md:
  A steady at 70 %   B 2× overload   C capacity 32 → 8 → 32 (the default)
  D latency ×4       E 10× bursts    F a hang at 10 s`

func runAdaptive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var out, format, scenario string
	var workers int
	var inprocess bool
	fs := newFlagSet("adaptive", aboutAdaptive, stderr)
	fs.StringVar(&out, "out", "../out", "directory for the chart (created if missing)")
	fs.StringVar(&format, "format", "png", "chart format: png or svg")
	fs.StringVar(&scenario, "scenario", "C", "A, B, C, D, E or F")
	fs.IntVar(&workers, "workers", 32, "the fixed bulkhead's slots")
	fs.BoolVar(&inprocess, "inprocess", false, "call the supplier as a function, not over loopback HTTP")
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
	over := "over loopback HTTP"
	if inprocess {
		over = "in process"
	}
	fmt.Fprintf(stderr, "running %s twice, %v each, in real time, %s\n", s.Name, s.Duration, over)
	var runs []loadtest.NamedRun
	for _, z := range []loadtest.Sizing{{Slots: 20, Adaptive: true, Loopback: !inprocess}, {Slots: workers, Loopback: !inprocess}} {
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
