// Command report runs every comparison of package compare in one process,
// in one run: the benchmarks (through testing.Benchmark, several counts,
// medians), the idle footprint of many suppliers, and the behaviour under a
// hung supplier. It prints a markdown report with absolute numbers and,
// for each peer, its ratio to fusebox from the same run, and writes to the
// output directory:
//
//	bench.txt   the raw benchmark lines, benchstat-compatible
//	report.md   the report that was printed
//
// Usage (from the compare directory):
//
//	go run ./cmd/report [-out ../out/compare] [-count 5] [-benchtime 200ms] [-cpu 2] [-suppliers 10000] [-unit 200ms] [-policy 10s]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

type options struct {
	out       string
	count     int
	benchtime string
	cpus      []int
	bench     *regexp.Regexp
	suppliers int
	unit      time.Duration
	seq       int
	policy    time.Duration
	skip      map[string]bool
}

func main() {
	testing.Init() // registers test.benchtime, which testing.Benchmark reads
	var o options
	var cpu, bench, skip string
	flag.StringVar(&o.out, "out", "../out/compare", "directory for bench.txt and report.md")
	flag.IntVar(&o.count, "count", 5, "runs of each benchmark (the report shows medians)")
	flag.StringVar(&o.benchtime, "benchtime", "200ms", "time (or Nx iterations) per benchmark run")
	flag.StringVar(&cpu, "cpu", strconv.Itoa(runtime.GOMAXPROCS(0)), "comma-separated GOMAXPROCS values for the benchmarks, like go test -cpu")
	flag.StringVar(&bench, "bench", ".", "regexp selecting benchmarks by name")
	flag.IntVar(&o.suppliers, "suppliers", 10000, "suppliers in the footprint measurement")
	flag.DurationVar(&o.unit, "unit", 200*time.Millisecond, "invocation timeout T of the real-time behaviour scenarios")
	flag.IntVar(&o.seq, "seq", 10000, "calls of the sequential (await, resubmit) caller")
	flag.DurationVar(&o.policy, "policy", 10*time.Second, "traffic per policy scenario (real time)")
	flag.StringVar(&skip, "skip", "", "comma-separated parts to skip: bench, behaviour, policies, footprint")
	flag.Parse()

	var err error
	if o.bench, err = regexp.Compile(bench); err != nil {
		fatal(err)
	}
	for _, f := range strings.Split(cpu, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fatal(fmt.Errorf("-cpu: bad value %q", f))
		}
		o.cpus = append(o.cpus, n)
	}
	o.skip = map[string]bool{}
	for _, s := range strings.Split(skip, ",") {
		if s != "" {
			o.skip[s] = true
		}
	}
	if err := flag.Set("test.benchtime", o.benchtime); err != nil {
		fatal(fmt.Errorf("-benchtime: %w", err))
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fatal(err)
	}
	if err := run(o); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "report:", err)
	os.Exit(1)
}

func run(o options) error {
	began := time.Now()
	var md bytes.Buffer
	w := io.MultiWriter(os.Stdout, &md)
	writeHeader(w, o)

	if !o.skip["bench"] {
		raw, err := os.Create(filepath.Join(o.out, "bench.txt"))
		if err != nil {
			return err
		}
		results := runBenchmarks(o, raw)
		if err := raw.Close(); err != nil {
			return err
		}
		writeBenchTables(w, o, results)
	}
	if !o.skip["behaviour"] {
		if err := runBehaviour(w, o); err != nil {
			return err
		}
	}
	if !o.skip["policies"] {
		if err := runPolicies(w, o); err != nil {
			return err
		}
	}
	if !o.skip["footprint"] {
		if err := runFootprint(w, o); err != nil {
			return err
		}
	}
	writeConfig(w, o)
	fmt.Fprintf(w, "\nThe whole run took %v.\n", time.Since(began).Round(time.Second))
	return os.WriteFile(filepath.Join(o.out, "report.md"), md.Bytes(), 0o644)
}

// progress goes to stderr, so stdout is the report alone.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}
