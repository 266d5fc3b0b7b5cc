package executor_test

import (
	"context"
	"testing"

	"github.com/fusebox-go/fusebox/executor"
)

// BenchmarkCallAdaptive puts a Submit+Await with an adaptive limit beside
// the same call with a fixed bulkhead, in the same run, for the target of
// at most 5 ns added per call: `make bench-adaptive` prints the per-round
// ratio and difference.
func BenchmarkCallAdaptive(b *testing.B) {
	for _, mode := range []struct {
		name     string
		adaptive executor.AdaptiveConfig
	}{{"static", executor.AdaptiveConfig{}}, {"adaptive", executor.AdaptiveConfig{Max: 1 << 20, Initial: 1 << 20}}} {
		ex, err := executor.New("bench", executor.Config{Slots: 1 << 20, Adaptive: mode.adaptive})
		if err != nil {
			b.Fatal(err)
		}
		defer ex.Close(context.Background())
		b.Run(mode.name, func(b *testing.B) { serialAndParallel(b, background, submitAwait(ex, trivial)) })
	}
}
