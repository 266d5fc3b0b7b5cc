package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/fusebox-go/fusebox/compare"
)

// peers are the modules whose versions the report states.
var peers = []string{
	"github.com/sony/gobreaker/v2",
	"github.com/failsafe-go/failsafe-go",
	"github.com/afex/hystrix-go",
	"github.com/eapache/go-resiliency",
	"github.com/zeromicro/go-zero",
	"github.com/alibaba/sentinel-golang",
	"github.com/panjf2000/ants/v2",
}

func writeHeader(w io.Writer, o options) {
	fmt.Fprintf(w, "# fusebox compared\n\n")
	fmt.Fprintf(w, "Run %s on %s/%s, %s, %d CPUs (GOMAXPROCS %d), %s.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, cpuModel(),
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	fmt.Fprintf(w, "Versions: fusebox (this tree)")
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, p := range peers {
			for _, d := range bi.Deps {
				if d.Path == p {
					fmt.Fprintf(w, ", %s %s", strings.TrimPrefix(p, "github.com/"), d.Version)
				}
			}
		}
	}
	fmt.Fprintf(w, ".\n\nCommand: `go run ./cmd/report -count %d -benchtime %s -cpu %s -suppliers %d -unit %v` in compare/ (`make compare`).\n",
		o.count, o.benchtime, joinInts(o.cpus), o.suppliers, o.unit)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

func writeConfig(w io.Writer, o options) {
	fmt.Fprintf(w, "\n## Configuration\n\nEvery library gets the same settings, each in its own terms.\n\n")
	fmt.Fprintf(w, "Benchmarks (pools large enough that a trivial call is never refused; open breakers for the Reject group stay open for an hour and were opened the way each library allows: "+
		"fusebox Trip(Manual), failsafe-go Open(); gobreaker, go-resiliency and sentinel-golang by 5 failing calls; go-zero by 10,000 failing calls (it has no open state: it drops calls with a probability near 1 then, and admitted/op in bench.txt says how many it let through); hystrix-go by failing calls until its health check opens it):\n\n")
	for _, d := range compare.Describe(compare.BenchSettings) {
		fmt.Fprintf(w, "- %s\n", d)
	}
	fmt.Fprintf(w, "\nBehaviour scenarios:\n\n")
	for _, d := range compare.Describe(compare.ScenarioSettings(o.unit)) {
		fmt.Fprintf(w, "- %s\n", d)
	}
}
