package main

import (
	"fmt"
	"io"
	"time"

	"github.com/fusebox-go/fusebox/compare"
)

func runFootprint(w io.Writer, o options) error {
	libs := compare.FootLibs()
	res := map[string]compare.FootprintResult{}
	for _, lib := range libs { // hystrix-go is last: its commands never go away
		progress("footprint: %s × %d", lib.Name, o.suppliers)
		r, err := compare.Footprint(lib, o.suppliers, compare.BenchSettings.Timeout+200*time.Millisecond)
		if err != nil {
			return err
		}
		res[lib.Name] = r
	}
	fmt.Fprintf(w, "\n## Idle footprint of %d suppliers\n\n", o.suppliers)
	fmt.Fprintln(w, "Per supplier, from runtime.ReadMemStats (HeapAlloc, StackInuse) and runtime.NumGoroutine after two GCs: right after setting the suppliers up, and after one successful call each (the invocation timeout + 200 ms later, once the goroutines and deadline timers of the call itself have ended: an idle supplier). "+
		"× fusebox is heap after one call over the fusebox row named in the last column: fusebox-breaker for breakers alone, the Group executor for libraries with a pool or bulkhead. "+
		"hystrix-go is set up with ConfigureCommand; its circuit (and its goroutines) appears on the first call.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| lib | heap B (set up) | goroutines (set up) | heap B (after a call) | stack B (after a call) | goroutines (after a call) | × fusebox | against |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---|")
	for _, lib := range libs {
		r := res[lib.Name]
		ratio := "–"
		if ref, ok := res[lib.Ref]; ok && ref.UsedHeap > 0 && lib.Ref != lib.Name {
			ratio = fmt.Sprintf("%.2f", r.UsedHeap/ref.UsedHeap)
		}
		fmt.Fprintf(w, "| %s | %.0f | %.2f | %.0f | %.0f | %.2f | %s | %s |\n", lib.Name,
			r.CreatedHeap, r.CreatedGoroutines, r.UsedHeap, max(0, r.UsedStack), r.UsedGoroutines, ratio, lib.Ref)
	}
	fmt.Fprintln(w, "| go (bare goroutine) | n/a: nothing per supplier | | | | | | |")
	return nil
}
