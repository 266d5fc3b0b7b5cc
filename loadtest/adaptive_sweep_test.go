package loadtest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// runCapacity runs one scenario in a synctest bubble.
func runCapacity(t *testing.T, s CapacityScenario, z Sizing) CapacityRun {
	t.Helper()
	var run CapacityRun
	synctest.Test(t, func(t *testing.T) {
		var err error
		run, err = RunCapacity(t.Context(), s, z)
		require.NoError(t, err)
	})
	return run
}

// TestAdaptiveSweep sweeps the static Slots over each scenario and runs
// the adaptive limit beside them (make sweep-adaptive; FUSEBOX_SWEEP=1).
// FUSEBOX_SWEEP_SIZES overrides the sizes (comma-separated).
func TestAdaptiveSweep(t *testing.T) {
	if os.Getenv("FUSEBOX_SWEEP") == "" {
		t.Skip("the sweep runs with make sweep-adaptive (FUSEBOX_SWEEP=1)")
	}
	sizes := []int{1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256}
	if v := os.Getenv("FUSEBOX_SWEEP_SIZES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			require.NoError(t, err)
			sizes = append(sizes, n)
		}
	}
	c8 := CapacityScenarios()[2]
	c8.Name, c8.Servers = "C's middle phase alone (8 servers)", constSrv(8)
	for _, s := range append(CapacityScenarios()[:5], c8) {
		t0 := time.Now()
		best, bestN := 0.0, 0
		line := ""
		goodput := map[int]float64{}
		for _, n := range sizes {
			r := runCapacity(t, s, Sizing{Slots: n})
			goodput[n] = r.Goodput
			line += fmt.Sprintf(" %d:%.0f", n, r.Goodput)
			if r.Goodput > best {
				best, bestN = r.Goodput, n
			}
		}
		within := ""
		for _, n := range sizes {
			if goodput[n] >= 0.95*best {
				within += fmt.Sprintf(" %d", n)
			}
		}
		line += "\n  within 95 % of the best:" + within
		a := runCapacity(t, s, Sizing{Slots: 20, Adaptive: true})
		t.Logf("%s: supplier's capacity %.0f/s; best static %d → %.0f/s; adaptive %.0f/s (%.1f %%), opens %d, refused %d, limit last %d, first seconds %v; %v\n  %s",
			s.Name, s.Capacity(), bestN, best, a.Goodput, 100*a.Goodput/best, a.Opens, a.Refused, a.Limits[len(a.Limits)-1], a.PerSecond[:3], time.Since(t0), line)
	}
}

// rightSize8 are the fixed sizes that serve C's middle phase (8 servers,
// the same traffic, on its own) with at least 95 % of the best goodput,
// from make sweep-adaptive.
var rightSize8 = [2]int{12, 20}
