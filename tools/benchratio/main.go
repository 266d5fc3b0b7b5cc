// Command benchratio reads `go test -bench` output in which each benchmark
// ran several times, and prints, for every benchmark that has a baseline
// sibling (the same name with one path element replaced by the baseline's,
// "go+chan" by default), the median and range of the ratios of its k-th
// run to the baseline's k-th run. Run the benchmarks interleaved (the
// whole set once per round, as `make bench-call` does), so that the k-th
// runs of a benchmark and its baseline are close in time: on a shared,
// noisy machine the per-round ratio is far steadier than a ratio of
// medians.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	base := flag.String("base", "go+chan", "the path element that names the baseline")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *base); err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
}

func run(r io.Reader, w io.Writer, base string) error {
	runs, order, err := parse(r)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-60s %10s %8s  %s\n", "benchmark", "median ns", "× "+base, "range of ratios (rounds)")
	for _, name := range order {
		ns := runs[name]
		line := fmt.Sprintf("%-60s %10.1f", name, median(ns))
		if b := baseline(name, base, runs); b != "" {
			var rs []float64
			for k := range min(len(ns), len(runs[b])) {
				rs = append(rs, ns[k]/runs[b][k])
			}
			line += fmt.Sprintf(" %7.2f×  %.2f–%.2f (%d)", median(rs), slices.Min(rs), slices.Max(rs), len(rs))
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

// parse returns every benchmark's ns/op in the order they ran, and the
// benchmarks' names in the order they first appear.
func parse(r io.Reader) (map[string][]float64, []string, error) {
	runs := map[string][]float64{}
	var order []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || f[3] != "ns/op" {
			continue
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: ns/op %q: %w", f[0], f[2], err)
		}
		if _, ok := runs[f[0]]; !ok {
			order = append(order, f[0])
		}
		runs[f[0]] = append(runs[f[0]], v)
	}
	return runs, order, sc.Err()
}

// baseline returns the name of name's baseline sibling, or "".
func baseline(name, base string, runs map[string][]float64) string {
	parts := strings.Split(name, "/")
	for i := 1; i < len(parts); i++ {
		if parts[i] == base {
			return "" // a baseline itself
		}
	}
	for i := 1; i < len(parts); i++ {
		alt := slices.Clone(parts)
		alt[i] = base
		if b := strings.Join(alt, "/"); runs[b] != nil {
			return b
		}
	}
	return ""
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
