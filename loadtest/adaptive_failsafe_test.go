package loadtest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdaptiveBesideFailsafe runs failsafe-go's adaptivelimiter (its
// defaults) in the same harness: the goodput in B and C beside fusebox's
// adaptive limit, and in the hang F, where it never trips and sends
// calls into the hung supplier all along while fusebox trips and sends
// at most its limit's worth (one probe per reset period after).
func TestAdaptiveBesideFailsafe(t *testing.T) {
	sc := CapacityScenarios()
	for _, s := range []CapacityScenario{sc[1], sc[2]} {
		if raceEnabled {
			s.Duration = raceDurations[s.Name[0]]
		}
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			fb := runCapacity(t, s, Sizing{Workers: 20, Adaptive: true})
			fs := runCapacity(t, s, Sizing{Failsafe: true})
			t.Logf("fusebox %.0f/s, failsafe-go %.0f/s (%.0f %%)", fb.Goodput, fs.Goodput, 100*fb.Goodput/fs.Goodput)
			assert.Greater(t, fb.Goodput, fs.Goodput)
		})
	}
	t.Run(sc[5].Name, func(t *testing.T) {
		t.Parallel()
		f := sc[5]
		fb := runCapacity(t, f, Sizing{Workers: 20, Adaptive: true})
		fs := runCapacity(t, f, Sizing{Failsafe: true})
		t.Logf("fusebox: trip %v after the onset, %d calls into the hang in 15 s; failsafe-go: no trip, %d calls into the hang (limit %d at the onset)",
			fb.FirstOpen-f.HangAt, fb.HungAll, fs.HungAll, fs.LimitAtHang)
		assert.NotZero(t, fb.FirstOpen)
		assert.Zero(t, fs.FirstOpen, "failsafe-go's limiter has no breaker to trip")
		assert.Greater(t, fs.HungAll, fb.HungAll)
	})
}

// The chart of a run draws (its content is looked at by eye).
func TestSaveCapacityChart(t *testing.T) {
	t.Parallel()
	s := CapacityScenarios()[2]
	s.Duration = 3 * time.Second
	run := runCapacity(t, s, Sizing{Workers: 20, Adaptive: true})
	path := filepath.Join(t.TempDir(), "adaptive.png")
	require.NoError(t, SaveCapacityChart(path, s, []NamedRun{{Name: "adaptive", Run: run}}))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Greater(t, fi.Size(), int64(10_000))
	require.Error(t, SaveCapacityChart(filepath.Join(t.TempDir(), "x.gif"), s, nil))
}
