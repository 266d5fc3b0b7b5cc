// Command overload runs the inbound overload comparison (package
// overload): "overload run" measures the capacity C of each handler,
// then runs every cell of the matrix against a server process of its
// own ("overload serve", pinned to -procs GOMAXPROCS on 127.0.0.1) and
// writes the tables (overload.md) and a chart of the goodput
// (overload.svg) to -out. Everything is bounded: each cell lasts
// -warm plus -dur (three times -dur for the step), every request has a
// 1 s deadline, and at most 15,000 are open at once.
//
//	go run ./cmd/overload run -out ../out -dur 5s -runs 3
//	go run ./cmd/overload run -scenarios noyield-3,yield-3 -subjects fusebox,kratos-1cpu -dur 3s
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/fusebox-go/fusebox/overload"
	"github.com/fusebox-go/fusebox/shed"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: overload run [flags] | overload serve -subject S -kind K")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "run":
		err = run(os.Args[2:])
	case "probe":
		err = probe(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (want run or serve)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "overload:", err)
		os.Exit(1)
	}
}

// serve runs one server until its stdin closes.
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	subject := fs.String("subject", "none", "the protection")
	kind := fs.String("kind", overload.NoYield, "the handler: noyield, yield or slow")
	trace := fs.Bool("trace", false, "stamp and count every request (overload.EnableTrace)")
	fs.Parse(args)
	if *trace {
		overload.EnableTrace()
	}
	overload.Calibrate()
	srv := &overload.Server{Kind: *kind}
	h, release, err := overload.Stack(*subject, srv)
	if err != nil {
		return err
	}
	defer release()
	mux := http.NewServeMux()
	mux.Handle("/work", h)
	mux.Handle("/admin/step", overload.Admin(srv))
	mux.HandleFunc("/admin/stats", func(w http.ResponseWriter, _ *http.Request) {
		st, ok := overload.ShedStats()
		if !ok {
			http.NotFound(w, nil)
			return
		}
		json.NewEncoder(w).Encode(struct {
			shed.Stats
			Goroutines int
		}{st, runtime.NumGoroutine()})
	})
	mux.HandleFunc("/admin/trace", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(overload.TraceCounts())
	})
	mux.HandleFunc("/admin/cpu", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(overload.CPUSeconds())
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		io.Copy(io.Discard, os.Stdin) // the driver closes it to stop us
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
		hs.Close()
	}()
	fmt.Printf("listening %s\n", lis.Addr())
	if err := hs.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	out := fs.String("out", "out", "directory of the tables")
	dur := fs.Duration("dur", 5*time.Second, "measured part of each cell (a step runs 3 times this)")
	warm := fs.Duration("warm", time.Second, "warm-up at 0.5 C before each measured part")
	runs := fs.Int("runs", 1, "runs of each cell; the tables give medians")
	procs := fs.Int("procs", 1, "the server's GOMAXPROCS")
	subjects := fs.String("subjects", strings.Join(overload.Subjects, ","), "subjects, comma-separated")
	scenarios := fs.String("scenarios", "", "scenarios, comma-separated (default all)")
	fs.Parse(args)
	if *dur <= 0 || *dur > 5*time.Minute || *runs < 1 || *runs > 9 || *procs < 1 {
		return errors.New("-dur must be in (0, 5m], -runs in [1, 9], -procs at least 1")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	o := overload.Options{Self: self, Procs: *procs, Dur: *dur, Warm: *warm, Runs: *runs, Deadline: time.Second, Log: os.Stderr}
	for _, s := range strings.Split(*subjects, ",") {
		if !slices.Contains(overload.Subjects, s) && !slices.Contains(overload.MoreSubjects, s) {
			return fmt.Errorf("unknown subject %q (want %v)", s, overload.Subjects)
		}
		o.Subjects = append(o.Subjects, s)
	}
	for _, sc := range overload.Scenarios() {
		if *scenarios == "" || slices.Contains(strings.Split(*scenarios, ","), sc.Name) {
			o.Scenarios = append(o.Scenarios, sc)
		}
	}
	if len(o.Scenarios) == 0 {
		return fmt.Errorf("no scenario matches %q", *scenarios)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	// C is measured again before each row: on a shared machine it drifts
	// with what else runs, and each row is compared with its own.
	var cells []overload.Cell
	var cs []string
	start := time.Now()
	for run := range o.Runs {
		for _, sc := range o.Scenarios {
			kind := sc.Kind
			if kind == overload.Slow {
				kind = overload.NoYield // the slow supplier's load is 1.5 C of the CPU-bound handler
			}
			c, err := overload.Capacity(ctx, o, kind, 3*time.Second)
			if err != nil {
				return err
			}
			cs = append(cs, fmt.Sprintf("%s %.0f", sc.Name, c))
			for _, s := range o.Subjects {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				cell, err := overload.RunCell(ctx, o, sc, s, c, run)
				if err != nil {
					return err
				}
				cells = append(cells, cell)
				fmt.Fprintf(os.Stderr, "run %d %-12s C %4.0f/s %-12s goodput %5.1f %% of C (%s)\n",
					run, sc.Name, c, s, 100*cell.Goodput(), counts(&cell.Res.All))
				for _, class := range slices.Sorted(maps.Keys(cell.Res.ByClass)) {
					fmt.Fprintf(os.Stderr, "      %-10s %s\n", class, counts(cell.Res.ByClass[class]))
				}
			}
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(*out, "overload.md")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "# Inbound overload: the comparison\n\n`overload run %s` (%s), %s, %d CPUs, server GOMAXPROCS=%d, %d run(s) a cell (medians), %s.\nC measured before each row (requests/s): %s.\n",
		strings.Join(args, " "), time.Since(start).Round(time.Second), runtime.Version(), runtime.NumCPU(), o.Procs, o.Runs, time.Now().UTC().Format("2006-01-02 15:04 UTC"), strings.Join(cs, ", "))
	overload.Report(f, cells, o.Scenarios, o.Subjects)
	fmt.Fprintln(f, "\nSubjects:")
	for _, s := range o.Subjects {
		fmt.Fprintf(f, "- `%s`: %s\n", s, overload.SubjectNotes[s])
	}
	svg := filepath.Join(*out, "overload.svg")
	g, err := os.Create(svg)
	if err != nil {
		return err
	}
	overload.Chart(g, cells, o.Scenarios, o.Subjects)
	if err := g.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s and %s\n", path, svg)
	return nil
}

// counts says what became of a tally's requests.
func counts(t *overload.Tally) string {
	return fmt.Sprintf("sent %d, good %d, shed %d, late %d, failed %d, not sent %d; p99 %v",
		t.Sent, t.Good, t.Shed, t.Late, t.Failed, t.NotSent, t.P99().Round(time.Millisecond))
}

// probe runs one load against one server and prints the fusebox
// shedder's Stats every half second: what it measured, for the docs.
func probe(args []string) error {
	fs := flag.NewFlagSet("probe", flag.ExitOnError)
	subject := fs.String("subject", "fusebox", "the protection")
	kind := fs.String("kind", overload.NoYield, "the handler")
	rate := fs.Float64("rate", 300, "requests per second")
	x := fs.Float64("x", 0, "if set, the rate is x times the handler's capacity C, measured first")
	quiet := fs.Bool("quiet", false, "do not print the shedder's Stats every half second")
	dur := fs.Duration("dur", 5*time.Second, "length of the load")
	warm := fs.Duration("warm", time.Second, "a warm-up at a sixth of -rate first")
	scenario := fs.String("scenario", "", "send the requests of this scenario (its headers and classes); -kind is then its handler")
	fs.Parse(args)
	var next func(*rand.Rand, int) overload.Request
	if *scenario != "" {
		i := slices.IndexFunc(overload.Scenarios(), func(sc overload.Scenario) bool { return sc.Name == *scenario })
		if i < 0 {
			return fmt.Errorf("unknown scenario %q", *scenario)
		}
		sc := overload.Scenarios()[i]
		next, *kind = sc.Next, sc.Kind
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	o := overload.Options{Self: self, Procs: 1, Dur: *dur, Deadline: time.Second, Trace: true}
	if *x > 0 {
		ck := *kind
		if ck == overload.Slow {
			ck = overload.NoYield // as in run: the slow load is a multiple of the CPU-bound C
		}
		c, err := overload.Capacity(context.Background(), o, ck, 3*time.Second)
		if err != nil {
			return err
		}
		*rate = *x * c
		fmt.Printf("C %.0f/s, rate %.0f/s\n", c, *rate)
	}
	base, stop, err := overload.StartServer(o, *subject, *kind)
	if err != nil {
		return err
	}
	defer stop()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if *quiet {
					continue
				}
				if resp, err := http.Get(base + "/admin/stats"); err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					fmt.Fprintf(os.Stderr, "%s", b)
				}
			}
		}
	}()
	cl := overload.Client()
	overload.Load{Base: base, Rate: *rate / 6, Dur: *warm, Deadline: time.Second, MaxOpen: 15000, Next: next}.Run(context.Background(), cl)
	fmt.Fprintln(os.Stderr, "warmed up")
	before, cpu0 := traceCounts(base), serverCPU(base)
	res := overload.Load{Base: base, Rate: *rate, Dur: *dur, Deadline: time.Second, MaxOpen: 15000, Next: next, Trace: true}.Run(context.Background(), cl)
	close(done)
	after, cpu1 := traceCounts(base), serverCPU(base)
	fmt.Printf("all: %s; goodput %.0f/s\n", counts(&res.All), float64(res.All.Good)/dur.Seconds())
	// The server's CPU over the load, for the cost of a refusal: compare
	// with a probe below capacity, where every request is served.
	fmt.Printf("server CPU: %.3f s over %v, %.1f %% of a CPU\n", cpu1-cpu0, *dur, 100*(cpu1-cpu0)/dur.Seconds())
	printSplits("all", &res.All)
	for _, class := range slices.Sorted(maps.Keys(res.ByClass)) {
		fmt.Printf("%s: %s\n", class, counts(res.ByClass[class]))
		printSplits(class, res.ByClass[class])
	}
	// What the server saw of the measured load (the warm-up's counts
	// taken away), by class.
	for _, class := range slices.Sorted(maps.Keys(after)) {
		a, b := after[class], before[class]
		var refused []string
		for r := range a.Refused {
			if n := a.Refused[r] - b.Refused[r]; n > 0 {
				name := "other"
				if r > 0 {
					name = shed.Reason(r).String()
				}
				refused = append(refused, fmt.Sprintf("%s %d", name, n))
			}
		}
		fmt.Printf("server %s: arrived %d (past the deadline on arrival %d), refused [%s], admitted %d (done past the deadline %d)\n",
			class, a.Arrived-b.Arrived, a.ArrivedLt-b.ArrivedLt, strings.Join(refused, ", "), a.Admitted-b.Admitted, a.DoneLate-b.DoneLate)
	}
	if resp, err := http.Get(base + "/admin/stats"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("stats: %s", b)
	}
	return nil
}

// serverCPU reads the CPU seconds the server process has used; NaN if
// unknown.
func serverCPU(base string) float64 {
	v := math.NaN()
	if resp, err := http.Get(base + "/admin/cpu"); err == nil {
		json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
	}
	return v
}

// traceCounts reads a traced server's counts; nil if it has none.
func traceCounts(base string) map[string]overload.TraceCount {
	resp, err := http.Get(base + "/admin/trace")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var m map[string]overload.TraceCount
	json.NewDecoder(resp.Body).Decode(&m)
	return m
}

// printSplits prints the median and p99 of each part of the served
// requests' time (overload.Split).
func printSplits(class string, t *overload.Tally) {
	if len(t.Splits) == 0 {
		return
	}
	for _, q := range []float64{0.5, 0.99} {
		s := t.Splits.Quantile(q)
		fmt.Printf("  %s p%g: to server %v, to Allow %v, handler %v, back %v (%d traced)\n", class, 100*q,
			s.ToServer.Round(100*time.Microsecond), s.ToAllow.Round(100*time.Microsecond),
			s.Handler.Round(100*time.Microsecond), s.Back.Round(100*time.Microsecond), len(t.Splits))
	}
	if p, n := t.Splits.P99After(time.Second); n > 0 {
		fmt.Printf("  %s p99 of those sent after the first second: %v (%d)\n", class, p.Round(100*time.Microsecond), n)
	}
}
