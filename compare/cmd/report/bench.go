package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fusebox-go/fusebox/compare"
)

// key identifies one benchmark at one GOMAXPROCS.
type key struct {
	name string // compare.Case.Name()
	cpu  int
}

// sample is the median of one benchmark's successful runs.
type sample struct {
	ns            float64
	bytes, allocs int64
	runs, failed  int    // successful and failed runs
	why           string // why the first failed run failed
}

// benchName is the name go test would print: the -N suffix unless N is 1.
func benchName(name string, cpu int) string {
	if cpu == 1 {
		return name
	}
	return fmt.Sprintf("%s-%d", name, cpu)
}

// runBenchmarks runs every selected case count times, interleaved (one run
// of every case, then the next round) so that a noisy phase of the machine
// hits every library alike, and writes each run as go test would.
func runBenchmarks(o options, raw io.Writer) map[key]sample {
	fmt.Fprintf(raw, "goos: %s\ngoarch: %s\npkg: github.com/fusebox-go/fusebox/compare\ncpu: %s\n", runtime.GOOS, runtime.GOARCH, cpuModel())
	var cases []compare.Case
	for _, c := range compare.Cases() {
		if o.bench.MatchString(c.Name()) {
			cases = append(cases, c)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	type run struct {
		ns            []float64
		bytes, allocs []int64
		failed        int
		why           string
	}
	runs := map[key]*run{}
	for round := 1; round <= o.count; round++ {
		for _, cpu := range o.cpus {
			runtime.GOMAXPROCS(cpu)
			for _, c := range cases {
				k := key{c.Name(), cpu}
				if runs[k] == nil {
					runs[k] = &run{}
				}
				compare.TakeFailure()
				r := testing.Benchmark(c.F)
				if why := compare.TakeFailure(); why != "" || r.N == 0 {
					runs[k].failed++
					if runs[k].why == "" {
						runs[k].why = why
					}
					progress("round %d: %s failed: %s", round, benchName(c.Name(), cpu), why)
					continue
				}
				line := fmt.Sprintf("%s\t%s\t%s", benchName(c.Name(), cpu), r.String(), r.MemString())
				fmt.Fprintln(raw, line)
				progress("round %d/%d: %s", round, o.count, line)
				runs[k].ns = append(runs[k].ns, float64(r.T.Nanoseconds())/float64(r.N))
				runs[k].bytes = append(runs[k].bytes, r.AllocedBytesPerOp())
				runs[k].allocs = append(runs[k].allocs, r.AllocsPerOp())
			}
		}
	}
	out := map[key]sample{}
	for k, r := range runs {
		s := sample{runs: len(r.ns), failed: r.failed, why: r.why}
		if len(r.ns) > 0 {
			s.ns = median(r.ns)
			s.bytes = median(r.bytes)
			s.allocs = median(r.allocs)
		}
		out[k] = s
	}
	return out
}

func median[T int64 | float64](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if _, v, ok := strings.Cut(l, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown"
}

// notApplicable lists, per group, the libraries that have nothing to
// measure there, and why.
var notApplicable = map[string][][2]string{
	"SubmitAwait": {
		{"gobreaker", "no pool: the call runs on the caller's goroutine"},
		{"go-resiliency", "no pool (breaker.Go starts a goroutine but returns no result)"},
		{"go-zero", "no pool: the call runs on the caller's goroutine"},
		{"sentinel-golang", "no pool (its isolation rule bounds concurrency but runs the call on the caller's goroutine)"},
	},
}

func writeBenchTables(w io.Writer, o options, res map[key]sample) {
	fmt.Fprintf(w, "\n## Benchmarks\n\nMedians of %d runs of %s each, all libraries interleaved in one process; ", o.count, o.benchtime)
	fmt.Fprintf(w, "× fusebox is the library's median ns/op over fusebox's in the same group, mode and GOMAXPROCS (below 1: faster than fusebox). ")
	fmt.Fprintf(w, "B/op and allocs/op are from the serial run. A failed run (an error where none was expected) is left out of the median and counted in the cell. Raw runs for benchstat: bench.txt.\n")
	libsOf := map[string][]string{}
	for _, c := range compare.Cases() {
		if !slices.Contains(libsOf[c.Group], c.Lib) {
			libsOf[c.Group] = append(libsOf[c.Group], c.Lib)
		}
	}
	for _, g := range compare.Groups {
		fmt.Fprintf(w, "\n### %s: %s\n\n", g.Name, g.What)
		head := "| lib | serial ns/op | × fusebox |"
		sep := "|---|---:|---:|"
		for _, cpu := range o.cpus {
			head += fmt.Sprintf(" parallel ns/op (GOMAXPROCS %d) | × fusebox |", cpu)
			sep += "---:|---:|"
		}
		fmt.Fprintf(w, "%s B/op | allocs/op |\n%s---:|---:|\n", head, sep)
		get := func(lib string, parallel bool, cpu int) (sample, bool) {
			mode := "serial"
			if parallel {
				mode = "parallel"
			}
			s, ok := res[key{"Benchmark" + g.Name + "/lib=" + lib + "/" + mode, cpu}]
			return s, ok
		}
		cell := func(lib string, parallel bool, cpu int) string {
			s, ok := get(lib, parallel, cpu)
			if !ok {
				return "– | –"
			}
			if s.runs == 0 {
				return fmt.Sprintf("failed (%s) | –", s.why)
			}
			ref, ok := get(g.Ref, parallel, cpu)
			ratio := "–"
			if ok && ref.runs > 0 && ref.ns > 0 {
				ratio = fmt.Sprintf("%.2f", s.ns/ref.ns)
			}
			ns := fmtNs(s.ns)
			if s.failed > 0 {
				ns += fmt.Sprintf(" (%d of %d runs failed: %s)", s.failed, s.failed+s.runs, s.why)
			}
			return fmt.Sprintf("%s | %s", ns, ratio)
		}
		for _, lib := range libsOf[g.Name] {
			if _, ok := get(lib, false, o.cpus[0]); !ok {
				if _, ok := get(lib, true, o.cpus[0]); !ok {
					continue // not selected
				}
			}
			row := fmt.Sprintf("| %s | %s |", lib, cell(lib, false, o.cpus[0]))
			for _, cpu := range o.cpus {
				row += " " + cell(lib, true, cpu) + " |"
			}
			s, _ := get(lib, false, o.cpus[0])
			fmt.Fprintf(w, "%s %d | %d |\n", row, s.bytes, s.allocs)
		}
		for _, na := range notApplicable[g.Name] {
			fmt.Fprintf(w, "| %s | n/a: %s |%s\n", na[0], na[1], strings.Repeat(" |", 2*len(o.cpus)+3))
		}
	}
}

func fmtNs(ns float64) string {
	switch {
	case ns < 10:
		return fmt.Sprintf("%.2f", ns)
	case ns < 100:
		return fmt.Sprintf("%.1f", ns)
	}
	return fmt.Sprintf("%.0f", ns)
}
