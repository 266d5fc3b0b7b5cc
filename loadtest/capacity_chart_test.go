package loadtest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The chart of a run draws (its content is looked at by eye).
func TestSaveCapacityChart(t *testing.T) {
	t.Parallel()
	s := CapacityScenarios()[2]
	s.Duration = 3 * time.Second
	run := runCapacity(t, s, Sizing{Slots: 20, Adaptive: true})
	path := filepath.Join(t.TempDir(), "adaptive.png")
	require.NoError(t, SaveCapacityChart(path, s, []NamedRun{{Name: "adaptive", Run: run}}))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Greater(t, fi.Size(), int64(10_000))
	require.Error(t, SaveCapacityChart(filepath.Join(t.TempDir(), "x.gif"), s, nil))
}
