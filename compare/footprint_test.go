package compare_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/compare"
)

// An idle fusebox supplier runs nothing: no goroutine per breaker or per
// Group executor, before or after its first call. (A standalone executor
// owns a pool that runs from its first call until Close, by design.)
func TestIdleFuseboxSuppliersRunNoGoroutines(t *testing.T) {
	for _, lib := range compare.FootLibs() {
		if lib.Name != "fusebox-breaker" && lib.Name != "fusebox (Group)" {
			continue
		}
		t.Run(lib.Name, func(t *testing.T) {
			r, err := compare.Footprint(lib, 1000, 50*time.Millisecond)
			require.NoError(t, err)
			t.Logf("per supplier: created %.0f B heap, %.3f goroutines; after one call %.0f B heap, %.3f goroutines",
				r.CreatedHeap, r.CreatedGoroutines, r.UsedHeap, r.UsedGoroutines)
			assert.Less(t, r.CreatedGoroutines, 0.01, "got %.3f goroutines per idle supplier, want 0", r.CreatedGoroutines)
			assert.Less(t, r.UsedGoroutines, 0.01, "got %.3f goroutines per supplier after one call, want 0", r.UsedGoroutines)
		})
	}
}

// Every other library's footprint is measured too, with few suppliers
// (the report command uses 10,000); hystrix-go is left out here because
// its commands can never be removed.
func TestEveryFootprintRuns(t *testing.T) {
	for _, lib := range compare.FootLibs() {
		if lib.Leaks {
			continue
		}
		t.Run(lib.Name, func(t *testing.T) {
			r, err := compare.Footprint(lib, 100, 10*time.Millisecond)
			require.NoError(t, err)
			t.Logf("per supplier: created %.0f B heap, %.2f goroutines; after one call %.0f B heap, %.2f goroutines",
				r.CreatedHeap, r.CreatedGoroutines, r.UsedHeap, r.UsedGoroutines)
		})
	}
}
