// Command callgraph runs the three-tier call-graph scenario (package
// overload): an edge (this process, an open-loop load with a 1 s
// deadline) sends checkout (critical) and recommendations (sheddable)
// requests to a frontend process, whose one supplier is a backend
// process pinned to -procs GOMAXPROCS with a CPU-bound handler. "callgraph
// run" measures the capacity C of the unprotected graph, then offers -x
// times C to each protection, each with fresh processes, and writes the
// table to -out/callgraph.md.
//
//	go run ./cmd/callgraph run -out ../out -dur 5s -runs 3 -x 1,3
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/fusebox-go/fusebox/overload"
)

func main() {
	logx.Disable() // go-zero's CPU statistics, printed every minute by every process that imports it
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: callgraph run [flags] | callgraph backend -subject S -kind K | callgraph frontend -subject S -backend URL")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "backend":
		err = backend(os.Args[2:])
	case "frontend":
		err = frontend(os.Args[2:])
	case "run":
		err = run(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (want run, backend or frontend)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "callgraph:", err)
		os.Exit(1)
	}
}

func backend(args []string) error {
	fs := flag.NewFlagSet("backend", flag.ExitOnError)
	subject := fs.String("subject", "none", "the protection")
	kind := fs.String("kind", overload.NoYield, "the handler: noyield or yield")
	fs.Parse(args)
	if *kind != overload.NoYield && *kind != overload.Yield {
		return fmt.Errorf("-kind %q: want noyield or yield", *kind)
	}
	overload.Calibrate()
	h, release, err := overload.Backend(*subject, &overload.Server{Kind: *kind})
	if err != nil {
		return err
	}
	defer release()
	return serve(h)
}

func frontend(args []string) error {
	fs := flag.NewFlagSet("frontend", flag.ExitOnError)
	subject := fs.String("subject", "none", "the protection")
	base := fs.String("backend", "", "the backend's base URL, http://127.0.0.1:port")
	fs.Parse(args)
	h, release, err := overload.Frontend(*subject, *base)
	if err != nil {
		return err
	}
	defer release()
	return serve(h)
}

// serve serves h on 127.0.0.1 until stdin closes.
func serve(h http.Handler) error {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ConnState: overload.ConnState}
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
	out := fs.String("out", "out", "directory of the table")
	dur := fs.Duration("dur", 5*time.Second, "measured part of each cell")
	warm := fs.Duration("warm", time.Second, "warm-up at 0.5 C before it")
	runs := fs.Int("runs", 1, "runs of each cell; the table gives medians")
	procs := fs.Int("procs", 1, "the backend's GOMAXPROCS")
	fprocs := fs.Int("frontprocs", 1, "the frontend's GOMAXPROCS (0: the runtime's default)")
	kind := fs.String("kind", overload.NoYield, "the backend's handler: noyield or yield")
	xs := fs.String("x", "3", "offered loads in multiples of C, comma-separated")
	critical := fs.Float64("critical", 0.3, "share of checkout (critical) requests")
	subjects := fs.String("subjects", strings.Join(overload.GraphSubjects, ","), "protections, comma-separated")
	fs.Parse(args)
	if *dur <= 0 || *dur > 5*time.Minute || *runs < 1 || *runs > 9 || *procs < 1 || *fprocs < 0 || *critical < 0 || *critical > 1 {
		return errors.New("-dur must be in (0, 5m], -runs in [1, 9], -procs at least 1, -frontprocs at least 0, -critical in [0, 1]")
	}
	var loads []float64
	for _, s := range strings.Split(*xs, ",") {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || x <= 0 || x > 10 {
			return fmt.Errorf("-x %q: want numbers in (0, 10]", s)
		}
		loads = append(loads, x)
	}
	var subs []string
	for _, s := range strings.Split(*subjects, ",") {
		if !slices.Contains(overload.GraphSubjects, s) {
			return fmt.Errorf("-subjects: unknown %q (want %v)", s, overload.GraphSubjects)
		}
		subs = append(subs, s)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	o := overload.GraphOptions{Self: self, BackendProcs: *procs, FrontendProcs: *fprocs, Kind: *kind,
		Dur: *dur, Warm: *warm, Deadline: time.Second, Critical: *critical}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var cells []overload.GraphCell
	var cs []string
	start, loadStart := time.Now(), loadAvg()
	for run := range *runs {
		// C is measured again before each run: on a shared machine it
		// drifts with what else runs.
		c, err := overload.GraphCapacity(ctx, o, 3*time.Second)
		if err != nil {
			return err
		}
		cs = append(cs, fmt.Sprintf("%.0f", c))
		for _, x := range loads {
			for _, s := range subs {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				cell, err := overload.RunGraphCell(ctx, o, s, x, c, run)
				if err != nil {
					return err
				}
				cells = append(cells, cell)
				ck, rc := cell.Res.ByClass[overload.Checkout], cell.Res.ByClass[overload.Recs]
				fmt.Fprintf(os.Stderr, "run %d %-8s %g × C (C %.0f/s): checkout %5.1f %% (sent %d shed %d late %d failed %d), recs %5.1f %% (sent %d shed %d late %d failed %d); backend admitted %.2f C, reached %.2f C; CPU cores edge %.2f frontend %.2f backend %.2f\n%s",
					run, s, x, c, 100*cell.Share(overload.Checkout), ck.Sent, ck.Shed, ck.Late, ck.Failed,
					100*cell.Share(overload.Recs), rc.Sent, rc.Shed, rc.Late, rc.Failed, cell.Admitted(), cell.Arrived(), cell.CPU[0], cell.CPU[1], cell.CPU[2], cell.Diagnosis())
			}
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(*out, "callgraph.md")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "# The three-tier call graph\n\n`callgraph run %s` (%s), %s, %d CPUs, backend GOMAXPROCS=%d (%s handler, %v of CPU a request), frontend GOMAXPROCS=%d, %.0f %% checkout, %d run(s) a cell (medians), %s, load average (1, 5, 15 min) %s at the start, %s at the end.\nC of the unprotected graph, measured before each run (requests/s): %s.\n",
		strings.Join(args, " "), time.Since(start).Round(time.Second), runtime.Version(), runtime.NumCPU(), o.BackendProcs, o.Kind, overload.Work,
		o.FrontendProcs, 100*o.Critical, *runs, time.Now().UTC().Format("2006-01-02 15:04 UTC"), loadStart, loadAvg(), strings.Join(cs, ", "))
	overload.GraphReport(f, cells)
	fmt.Fprintf(f, "\nWhere the checkouts were lost, summed over the runs (the frontend's outcomes of its calls, the edge's late and failed requests):\n")
	overload.GraphLosses(f, cells)
	fmt.Fprintln(f, "\nProtections:")
	for _, s := range subs {
		fmt.Fprintf(f, "- `%s`: %s\n", s, overload.GraphNotes[s])
	}
	fmt.Fprintf(os.Stderr, "wrote %s\n", path)
	return nil
}

// loadAvg returns the machine's load averages, or "?" where it has none.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}
