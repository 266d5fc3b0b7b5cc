// Command loadtest reproduces the worker-exhaustion outage of docs/design.md side
// by side for three protections (timeout only, breaker, fusebox), or the
// queue scenario with and without a low-water mark, over real HTTP on
// 127.0.0.1. It prints a summary table and writes a JSON report and a chart.
//
// Usage:
//
//	loadtest [exhaustion] [flags]   the worker-exhaustion scenario (the default)
//	loadtest queue [flags]          an asynchronous supplier behind a queue
//	loadtest burst [flags]          a healthy, bursty supplier: busy or stuck
//	loadtest inbound [flags]        a slow route beside a fast one, with and without inbound.Handler
//	loadtest priorities [flags]     critical, default and sheddable requests on one overloaded route
//
// Every run is bounded: it sends rate × duration requests of each kind at
// most, and stops by itself after duration / speed of wall time per run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/fusebox-go/fusebox/loadtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.As(err, new(usageError)):
		if !errors.As(err, new(printedError)) {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
		}
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// usageError is a bad command line.
type usageError struct{ error }

// printedError is an error that has been reported already (by the flag
// package).
type printedError struct{ error }

const usage = `Usage:
  loadtest [exhaustion] [flags]   one hung supplier, three protections (the default)
  loadtest queue [flags]          an asynchronous supplier behind a queue
  loadtest burst [flags]          a healthy, bursty supplier: busy or stuck
  loadtest inbound [flags]        a slow route beside a fast one, with and without inbound.Handler
  loadtest priorities [flags]     critical, default and sheddable requests on one overloaded route
  loadtest adaptive [flags]       an adaptive bulkhead beside a fixed one, on a supplier with finite capacity
Run "loadtest exhaustion -h", "loadtest queue -h" or "loadtest burst -h" for the flags.
`

// run is the command with its arguments (without the program name).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	scenario := "exhaustion"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		scenario, args = args[0], args[1:]
	}
	switch scenario {
	case "exhaustion":
		return runExhaustion(ctx, args, stdout, stderr)
	case "queue":
		return runQueue(ctx, args, stdout, stderr)
	case "burst":
		return runBurst(ctx, args, stdout, stderr)
	case "inbound":
		return runInbound(ctx, args, stdout, stderr)
	case "priorities":
		return runPriorities(ctx, args, stdout, stderr)
	case "adaptive":
		return runAdaptive(ctx, args, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "loadtest: unknown scenario %q\n%s", scenario, usage)
	return usageError{printedError{errors.New("unknown scenario")}}
}

// common are the flags both scenarios have.
type common struct {
	transport, out, format string
	speed                  float64
	progress               time.Duration
}

func (c *common) register(fs *flag.FlagSet, speed float64) {
	fs.StringVar(&c.transport, "transport", "http", "http: shop and supplier are HTTP servers on 127.0.0.1; inproc: function calls")
	fs.Float64Var(&c.speed, "speed", speed, "scenario seconds per wall second: every duration is divided by it, every rate multiplied")
	fs.StringVar(&c.out, "out", "../out", "directory for the JSON report and the chart (created if missing)")
	fs.StringVar(&c.format, "format", "png", "chart format: png or svg")
	fs.DurationVar(&c.progress, "progress", 3*time.Second, "wall time between progress lines on stderr (0: none)")
}

func (c *common) reporter(stderr io.Writer) func(loadtest.Progress) {
	if c.progress <= 0 {
		return nil
	}
	return func(p loadtest.Progress) {
		fmt.Fprintf(stderr, "  %-20s %6.0f/%.0f s  %s\n", p.Run, p.At.Seconds(), p.Duration.Seconds(), p.Line)
	}
}

// parse parses args into fs and reports a bad command line as a usageError.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{printedError{err}}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected arguments: %q\n", fs.Args())
		fs.Usage()
		return usageError{printedError{errors.New("unexpected arguments")}}
	}
	return nil
}

func newFlagSet(name, about string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("loadtest "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: loadtest %s [flags]\n\n%s\nDurations are scenario time unless a flag says otherwise.\n\nFlags:\n", name, about)
		fs.PrintDefaults()
	}
	return fs
}

// outputs writes the JSON report and the chart to dir and says where.
func outputs(stdout io.Writer, dir, name, format string, json func(io.Writer) error, chart func(string) error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	jsonPath := filepath.Join(dir, name+".json")
	f, err := os.Create(jsonPath)
	if err != nil {
		return err
	}
	if err := json(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	chartPath := filepath.Join(dir, name+"."+format)
	if err := chart(chartPath); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nJSON:  %s\nchart: %s\n", jsonPath, chartPath)
	return nil
}

func checkFormat(format string) error {
	if format != "png" && format != "svg" {
		return usageError{fmt.Errorf("-format must be png or svg, got %q", format)}
	}
	return nil
}
