package main

import (
	"fmt"
	"io"
	"time"

	"github.com/fusebox-go/fusebox/compare"
)

func runBehaviour(w io.Writer, o options) error {
	u := o.unit
	s := compare.ScenarioSettings(u)
	every, window := u/50, 5*u
	fmt.Fprintf(w, "\n## Behaviour under a hung supplier\n\n")
	fmt.Fprintf(w, "Real time, T = %v (the invocation timeout); %d slots, %d consecutive failures, reset timeout %v. ", u, s.Slots, s.Failures, s.Reset)
	fmt.Fprintf(w, "A caller arrives every %v (T/50) for %v (5T), each on its own goroutine like a request worker, and calls a supplier that never answers. ", every, window)
	fmt.Fprintf(w, "Times are in units of T, measured from the first call. "+
		"*reached*: calls whose function ran; *fast refusal*: a call refused without reaching the supplier (open breaker or full bulkhead/pool); "+
		"*stuck*: functions running at once on the hung supplier (max / at the end); *blocked callers*: callers waiting for an outcome at once; "+
		"*longest wait*: the longest a caller waited (a caller still waiting at the end counts up to 5T). "+
		"The same scenario runs in virtual time (testing/synctest) in the tests, for every library but hystrix-go.\n")
	for _, honours := range []bool{false, true} {
		if honours {
			fmt.Fprintf(w, "\n### The supplier honours its context (returns when the context ends)\n\n")
		} else {
			fmt.Fprintf(w, "\n### The supplier ignores its context (a blocking call without a deadline)\n\n")
		}
		fmt.Fprintln(w, "| lib | bound | reached / calls | last reached | first fast refusal | first open refusal | stuck max / end | blocked callers max | longest wait | outcomes ok/open/full/timeout/failed |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
		for _, lib := range compare.Libs() {
			progress("behaviour: %s (honours context: %v)", lib.Name, honours)
			r, err := compare.Hung(lib, s, honours, every, window, 20*u)
			if err != nil {
				return fmt.Errorf("hung supplier, %s: %w", lib.Name, err)
			}
			bound := "none"
			if r.Bound > 0 {
				bound = fmt.Sprint(r.Bound)
			}
			wait := inT(r.MaxWait, u)
			if r.BlockedAtEnd > 0 && r.MaxWait >= window-2*every {
				wait = "≥ " + wait + " (still waiting)"
			}
			fmt.Fprintf(w, "| %s | %s | %d / %d | %s | %s | %s | %d / %d | %d | %s | %d/%d/%d/%d/%d |\n",
				lib.Name, bound, r.Reached, r.Calls, inT(r.Last, u), inT(r.FirstFast, u), inT(r.FirstOpen, u),
				r.MaxRunning, r.RunningAtEnd, r.MaxBlocked, wait,
				r.Outcomes[compare.OK], r.Outcomes[compare.Open], r.Outcomes[compare.Full], r.Outcomes[compare.TimedOut], r.Outcomes[compare.Failed])
		}
	}

	fmt.Fprintf(w, "\n### A sequential caller: await, then submit again at once (1 slot, healthy supplier, %d calls)\n\n", o.seq)
	fmt.Fprintln(w, "Any refusal is spurious: the only slot belonged to the caller's own finished call.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| lib | spurious refusals | of which full | of which open |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, lib := range compare.Libs() {
		if !lib.Bounded {
			fmt.Fprintf(w, "| %s | n/a: no concurrency bound | | |\n", lib.Name)
			continue
		}
		progress("sequential: %s", lib.Name)
		r, err := compare.Sequential(lib, o.seq)
		if err != nil {
			return fmt.Errorf("sequential, %s: %w", lib.Name, err)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d |\n", lib.Name, r.Spurious(), r.Outcomes[compare.Full], r.Outcomes[compare.Open])
	}

	fmt.Fprintf(w, "\n### Late results: calls admitted before the trip that end afterwards\n\n")
	fmt.Fprintf(w, "Breakers alone (real time, reset timeout %v). One call is admitted and held; %d failing calls open the breaker; then the held call ends: "+
		"while the breaker is open, or (after the reset timeout) while the one half-open probe is running. Each cell is the state before → after the late result, "+
		"\"(ignored)\" when it did not change. hystrix-go has no half-open state (an open circuit lets one test call through after its sleep window), and its timeout is raised to 20× the reset timeout here, or it would drop the late result at its timeout.\n\n",
		s.Reset, s.Failures)
	fmt.Fprintln(w, "| lib | late success while open | late failure while the probe runs | then the probe succeeds | late success while the probe runs |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, lib := range compare.LateLibs() {
		progress("late results: %s", lib.Name)
		r, err := compare.Late(lib, s)
		if err != nil {
			return fmt.Errorf("late results, %s: %w", lib.Name, err)
		}
		fmt.Fprintf(w, "| %s | %v | %v | %v | %v |\n", lib.Name, r.SuccessWhileOpen, r.FailureWhileProbing, r.ProbeAfterFailure, r.SuccessWhileProbing)
	}
	return nil
}

func inT(d, u time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.2f T", float64(d)/float64(u))
}
