package compare_test

import (
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/compare"
)

var errSupplier = errors.New("supplier failed")

func TestEverySubjectCallsTheSupplierAndClassifies(t *testing.T) {
	for _, lib := range compare.Libs() {
		t.Run(lib.Name, func(t *testing.T) {
			sub, err := lib.New(compare.BenchSettings)
			require.NoError(t, err)
			defer sub.Close()
			ctx := context.Background()

			v, err := sub.Call(ctx, func(context.Context) (int, error) { return 7, nil })
			require.NoError(t, err)
			assert.Equal(t, 7, v, "got value %d, want 7", v)
			assert.Equal(t, compare.OK, sub.Classify(err))

			_, err = sub.Call(ctx, func(context.Context) (int, error) { return 0, errSupplier })
			require.Error(t, err)
			assert.Equal(t, compare.Failed, sub.Classify(err), "got %v for %v, want failed", sub.Classify(err), err)
		})
	}
}

// Every benchmark body runs a few iterations: a smoke test, not a
// measurement.
func TestEveryBenchmarkCaseRuns(t *testing.T) {
	bt := flag.Lookup("test.benchtime")
	old := bt.Value.String()
	require.NoError(t, bt.Value.Set("20x"))
	defer func() { _ = bt.Value.Set(old) }()
	for _, c := range compare.Cases() {
		t.Run(c.Name(), func(t *testing.T) {
			compare.TakeFailure()
			r := testing.Benchmark(c.F)
			assert.Empty(t, compare.TakeFailure(), "the benchmark failed")
			assert.Positive(t, r.N, "the benchmark failed (testing.Benchmark returns N=0 then)")
		})
	}
}

func TestDescribeNamesEveryLibrary(t *testing.T) {
	d := compare.Describe(compare.ScenarioSettings(time.Second))
	assert.Len(t, d, 11)
	all := strings.Join(d, "\n")
	for _, lib := range compare.Libs() {
		assert.Contains(t, all, lib.Name, "got no description of %s", lib.Name)
	}
}
