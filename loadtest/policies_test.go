package loadtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// playVirtual runs a policy scenario in a synctest bubble and, when
// POLICY_SCENARIO_OUT names a directory (make demo-policies), writes its
// table and JSON there.
func playVirtual(t *testing.T, run func(context.Context, PolicyConfig) (*PolicyReport, error)) *PolicyReport {
	t.Helper()
	var rep *PolicyReport
	synctest.Test(t, func(t *testing.T) {
		var err error
		rep, err = run(t.Context(), PolicyConfig{})
		require.NoError(t, err)
	})
	if dir := os.Getenv("POLICY_SCENARIO_OUT"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		f, err := os.OpenFile(filepath.Join(dir, "policies.txt"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		require.NoError(t, rep.WriteTable(f))
		require.NoError(t, f.Close())
	}
	for _, r := range rep.Runs {
		t.Logf("%s: %+v", r.Name, r)
	}
	return rep
}

func runs(t *testing.T, rep *PolicyReport, names ...string) []PolicyRun {
	out := make([]PolicyRun, len(names))
	for i, n := range names {
		r, ok := rep.Run(n)
		require.True(t, ok, n)
		out[i] = r
	}
	return out
}

func TestRetryStorm(t *testing.T) {
	t.Parallel()
	rep := playVirtual(t, RunRetryStorm)
	r := runs(t, rep, PolicyNone, PolicyNaiveRetry, PolicyRetry)
	none, naive, budget := r[0], r[1], r[2]
	assert.InDelta(t, 1.0, none.Load, 1e-9)
	assert.InDelta(t, 1.75, naive.Load, 0.1, "naive retries multiply the supplier's load")
	assert.LessOrEqual(t, budget.Load, 1.15, "the budget bounds the supplier's load")
	assert.Greater(t, budget.Load, 1.05, "and the budget is used")
	assert.Positive(t, budget.BudgetRefused)
	// Success: at most the extra calls' worth better, and never worse.
	assert.GreaterOrEqual(t, budget.Success(), none.Success())
	assert.LessOrEqual(t, budget.Success(), none.Success()+budget.Extra())
	assert.Greater(t, naive.Success(), budget.Success())
}

func TestRetryHungSupplier(t *testing.T) {
	rep := playVirtual(t, RunRetryHung)
	r := runs(t, rep, PolicyNone, PolicyNaiveRetry, PolicyRetry)
	none, naive, budget := r[0], r[1], r[2]
	for _, run := range []PolicyRun{naive, budget} {
		assert.LessOrEqual(t, run.Reached, none.Reached+2, "%s: retries add nothing to the calls that reach a hung supplier", run.Name)
	}
}

func TestHedgeTail(t *testing.T) {
	t.Parallel()
	rep := playVirtual(t, RunHedgeTail)
	r := runs(t, rep, PolicyNone, PolicyHedgeP95)
	none, hedged := r[0], r[1]
	assert.Greater(t, none.P99.Seconds(), 0.9, "without hedging the p99 is the slow tail")
	require.Positive(t, hedged.Delay)
	assert.LessOrEqual(t, hedged.P99, 3*hedged.Delay, "hedged, the p99 is at most 3 × the p95")
	assert.LessOrEqual(t, hedged.Extra(), 0.05, "for at most 5 % extra calls")
	assert.Positive(t, hedged.HedgesWon)
}

func TestHedgeOverload(t *testing.T) {
	t.Parallel()
	rep := playVirtual(t, RunHedgeOverload)
	r := runs(t, rep, PolicyNone, PolicyHedgeFixed, PolicyHedgeBound)
	none, unbounded, bounded := r[0], r[1], r[2]
	assert.InDelta(t, 1.0, none.Load, 1e-9)
	assert.Greater(t, unbounded.Load, 1.9, "hedges without a budget double the load of a slow supplier")
	// 5 % of the calls, plus the floor: 10 at once, then 10 per 10 s
	// (the spent ones decay) over the minute.
	floor := (10 + 10*rep.Config.Duration.Seconds()/10) / float64(bounded.Calls)
	assert.LessOrEqual(t, bounded.Extra(), 0.05+floor, "the budget stops the hedges")
	assert.Positive(t, bounded.BudgetRefused)
}
