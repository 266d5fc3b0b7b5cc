package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/compare"
)

// runPolicies plays the policy scenarios in real time, every subject of a
// scenario at once (their suppliers only sleep, so they barely share the
// CPU), each on identical traffic.
func runPolicies(w io.Writer, o options) error {
	fmt.Fprintf(w, "\n## Policies: retries and hedged calls\n\n")
	fmt.Fprintf(w, "Real time, %v of steady traffic per scenario, every subject of a scenario at once, on identical traffic (the same seed). "+
		"fusebox: package policy around an executor (1000 slots, 2 s timeout, a breaker that 50 %% failures do not trip); "+
		"failsafe-go: its retry or hedge policy around a 2 s timeout, with its budget (budget.WithMaxRate, minimum concurrency 3: it bounds the retries or hedges *in flight at once* to a share of the executions in flight). "+
		"Retries: 3 attempts, back-off 100 ms doubling (fusebox: drawn from its upper half; failsafe-go: jitter factor 0.25). "+
		"*load*: calls reaching the supplier over the callers' calls. The same scenarios run for a minute in virtual time in the tests (policies_test.go).\n", o.policy)
	for _, sc := range compare.PolicyScenarios(o.policy) {
		fmt.Fprintf(w, "\n### %s: %s\n\n", sc.Name, sc.About)
		fmt.Fprintln(w, "| subject | calls | reaching the supplier | load | success | p50 | p99 |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
		progress("policies: %s", sc.Name)
		res := make([]compare.PolicyResult, len(sc.Subjects))
		errs := make([]error, len(sc.Subjects))
		var wg sync.WaitGroup
		for i, sub := range sc.Subjects {
			wg.Go(func() { res[i], errs[i] = compare.RunPolicy(context.Background(), sc, sub, 1) })
		}
		wg.Wait()
		for i, r := range res {
			if errs[i] != nil {
				return fmt.Errorf("policies, %s, %s: %w", sc.Name, r.Name, errs[i])
			}
			fmt.Fprintf(w, "| %s | %d | %d | %.3f× | %.1f %% | %s | %s |\n", r.Name, r.Calls, r.Reached, r.Load(), 100*r.Success(), msOf(r.P50), msOf(r.P99))
		}
	}
	return nil
}

func msOf(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
