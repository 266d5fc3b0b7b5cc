// Command instrcount counts the instructions one iteration of a benchmark
// executes, under Valgrind's cachegrind, and puts each benchmark beside the
// first (the baseline). A count of instructions moves far less with what
// else the machine runs than a time does (only the scheduler's share
// moves), so it tells apart costs of a few nanoseconds that a shared
// machine's noise hides from a timed benchmark; it does not weigh an
// atomic instruction or a cache miss above an add, so it complements the
// timed figures rather than replacing them.
//
// Each benchmark runs at two iteration counts (-n, on one P, with
// asynchronous preemption off, which Valgrind handles poorly), and the
// difference of the two totals over the difference of the counts is the
// cost of one iteration: the test binary's start, the benchmark's set-up
// and its first iteration cancel out. The median of -rounds such figures
// is printed.
//
//	instrcount -test out/executor.test -split '(*adaptState).closeWindow' \
//	    static='^BenchmarkCallAdaptive$/^static$/^serial$' \
//	    adaptive='^BenchmarkCallAdaptive$/^adaptive$/^serial$'
//
// -top K lists, under each benchmark, the K functions whose own
// (exclusive) count per iteration differs most from the baseline's: where
// the added instructions go. Work that runs once per window of time is
// among them at a far higher rate than on the machine itself, since
// Valgrind slows each iteration some 50×.
package main

import (
	"bufio"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	test := flag.String("test", "", "the test binary (go test -c)")
	ns := flag.String("n", "20000,60000", "the two iteration counts, comma-separated")
	rounds := flag.Int("rounds", 3, "measurements per benchmark; the median is printed")
	top := flag.Int("top", 0, "under each benchmark, the functions whose own count differs most from the baseline's")
	flag.Parse()
	cfg, err := parseArgs(*test, *ns, *rounds, *top, flag.Args())
	if err == nil {
		err = run(cfg, valgrind, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "instrcount:", err)
		os.Exit(1)
	}
}

type bench struct{ name, re string }

type config struct {
	test    string
	n1, n2  int
	rounds  int
	top     int
	benches []bench
}

func parseArgs(test, ns string, rounds, top int, args []string) (config, error) {
	c := config{test: test, rounds: rounds, top: top}
	if test == "" {
		return c, errors.New("-test: the test binary is required")
	}
	a, b, ok := strings.Cut(ns, ",")
	n1, err1 := strconv.Atoi(a)
	n2, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n1 < 1 || n2 <= n1 {
		return c, fmt.Errorf("-n: want two iteration counts, the second larger, as 20000,60000; got %q", ns)
	}
	c.n1, c.n2 = n1, n2
	if rounds < 1 {
		return c, fmt.Errorf("-rounds: want at least 1, got %d", rounds)
	}
	if top < 0 {
		return c, fmt.Errorf("-top: want 0 or more, got %d", top)
	}
	for _, arg := range args {
		name, re, ok := strings.Cut(arg, "=")
		if !ok || name == "" || re == "" {
			return c, fmt.Errorf("benchmark %q: want name=regexp", arg)
		}
		c.benches = append(c.benches, bench{name, re})
	}
	if len(c.benches) == 0 {
		return c, errors.New("no benchmark: give name=regexp, the baseline first")
	}
	return c, nil
}

// profile is what one valgrind run counted: the instructions of the
// whole run, and each function's own (nil unless -top asks for them).
type profile struct {
	total int64
	self  map[string]int64
}

// profiler runs the benchmark re for n iterations under valgrind.
type profiler func(c config, re string, n int) (profile, error)

// perCall is one iteration's share of what a profile counted.
type perCall struct {
	total float64
	self  map[string]float64
}

func run(c config, prof profiler, w io.Writer) error {
	var got []perCall
	for _, b := range c.benches {
		var rs []perCall
		for range c.rounds {
			p1, err := prof(c, b.re, c.n1)
			if err != nil {
				return fmt.Errorf("%s: %w", b.name, err)
			}
			p2, err := prof(c, b.re, c.n2)
			if err != nil {
				return fmt.Errorf("%s: %w", b.name, err)
			}
			d := float64(c.n2 - c.n1)
			r := perCall{total: float64(p2.total-p1.total) / d, self: map[string]float64{}}
			for f := range joinKeys(p1.self, p2.self) {
				r.self[f] = float64(p2.self[f]-p1.self[f]) / d
			}
			rs = append(rs, r)
		}
		got = append(got, medianOf(rs))
	}
	fmt.Fprintf(w, "%-12s %14s %8s %8s\n", "benchmark", "instr/call", "× base", "+ base")
	for i, b := range c.benches {
		g := got[i]
		if i == 0 {
			fmt.Fprintf(w, "%-12s %14.0f\n", b.name, g.total)
			continue
		}
		fmt.Fprintf(w, "%-12s %14.0f %7.3f× %+8.0f\n", b.name, g.total, g.total/got[0].total, g.total-got[0].total)
		for _, f := range largestChanges(got[0].self, g.self, c.top) {
			fmt.Fprintf(w, "%27s %+8.1f  %s\n", "", g.self[f]-got[0].self[f], f)
		}
	}
	return nil
}

// largestChanges returns the k functions whose count changed most from
// base to b, by size of the change, leaving out changes under one
// instruction a call.
func largestChanges(base, b map[string]float64, k int) []string {
	var fs []string
	for f := range joinKeys(base, b) {
		if math.Abs(b[f]-base[f]) >= 1 {
			fs = append(fs, f)
		}
	}
	slices.SortFunc(fs, func(x, y string) int {
		return cmp.Or(cmp.Compare(math.Abs(b[y]-base[y]), math.Abs(b[x]-base[x])), strings.Compare(x, y))
	})
	return fs[:min(k, len(fs))]
}

// joinKeys is the set of the keys of a and b.
func joinKeys[V any](a, b map[string]V) map[string]struct{} {
	ks := map[string]struct{}{}
	for k := range a {
		ks[k] = struct{}{}
	}
	for k := range b {
		ks[k] = struct{}{}
	}
	return ks
}

// medianOf takes the round whose total is the median (the lower of the
// two middle ones for an even count), so that its functions' counts
// belong to it.
func medianOf(rs []perCall) perCall {
	s := slices.SortedFunc(slices.Values(rs), func(a, b perCall) int { return cmp.Compare(a.total, b.total) })
	return s[(len(s)-1)/2]
}

func valgrind(c config, re string, n int) (profile, error) {
	dir, err := os.MkdirTemp("", "instrcount")
	if err != nil {
		return profile{}, err
	}
	defer os.RemoveAll(dir)
	// cachegrind without its cache simulation counts instructions only.
	// (callgrind counts them too, but its tracking of calls fails on the
	// signals of a test that starts a server as a child process, and Go's
	// stack switches confuse it.)
	out := filepath.Join(dir, "cachegrind.out")
	cmd := exec.Command("valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file="+out, "-q",
		c.test, "-test.run", "^$", "-test.bench", re, "-test.benchtime", fmt.Sprintf("%dx", n), "-test.cpu", "1")
	cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return profile{}, fmt.Errorf("valgrind: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	f, err := os.Open(out)
	if err != nil {
		return profile{}, err
	}
	defer f.Close()
	p := profile{}
	if p.total, err = totals(f); err != nil || c.top == 0 {
		return p, err
	}
	ann, err := exec.Command("cg_annotate", "--auto=no", "--threshold=0", out).Output()
	if err != nil {
		return p, fmt.Errorf("cg_annotate: %w", err)
	}
	p.self, err = selfCounts(strings.NewReader(string(ann)))
	return p, err
}

// totals reads the "summary:" line of a cachegrind output file: the
// instructions of the whole run.
func totals(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "summary:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("cachegrind output: summary %q: %w", v, err)
			}
			return n, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("cachegrind output: no summary line")
}

// "  13,457,440 ( 4.15%)  /usr/local/go/src/runtime/proc.go:runtime.casgstatus [/tmp/x.test]"
var selfLine = regexp.MustCompile(`^\s*([0-9,]+)\s+\(\s*[0-9.]+%\)\s+(\S+?):(\S+)`)

// selfCounts reads cg_annotate's table of functions by their own counts
// into a map keyed by function, its name without its module's path. A
// function appears there under each source file its instructions come
// from (its own, and that of the code inlined into it): the map sums them.
func selfCounts(r io.Reader) (map[string]int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	m := map[string]int64{}
	for sc.Scan() {
		g := selfLine.FindStringSubmatch(sc.Text())
		if g == nil {
			continue
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(g[1], ",", ""), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("cg_annotate: count %q: %w", g[1], err)
		}
		fn := g[3]
		path := fn // the package path: up to a method's receiver or a generic's type arguments
		if i := strings.IndexAny(fn, "(["); i >= 0 {
			path = fn[:i]
		}
		if i := strings.LastIndex(path, "/"); i >= 0 {
			fn = fn[i+1:] // github.com/x/y/executor.(*T).f: executor.(*T).f
		}
		m[fn] += n
	}
	return m, sc.Err()
}
