package loadtest

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCharts(t *testing.T) {
	t.Parallel()
	ec := DefaultExhaustion()
	ec.OutageStart, ec.OutageEnd, ec.Duration = 5*time.Second, 20*time.Second, 40*time.Second
	qc := DefaultQueue()
	qc.Queue, qc.QueueTimeout, qc.ResetTimeout, qc.Duration = 40, 20*time.Second, time.Minute, 60*time.Second
	var ex *ExhaustionReport
	var q *QueueReport
	synctest.Test(t, func(t *testing.T) {
		var err error
		ex, err = RunExhaustion(t.Context(), ec)
		require.NoError(t, err)
		q, err = RunQueue(t.Context(), qc)
		require.NoError(t, err)
	})
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		save func(string) error
	}{{"exhaustion", ex.SaveChart}, {"queue", q.SaveChart}} {
		t.Run(tc.name+" as PNG", func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".png")
			require.NoError(t, tc.save(path))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			img, err := png.DecodeConfig(bytes.NewReader(b))
			require.NoError(t, err)
			assert.Equal(t, 1100, img.Width, "10 in at 110 dpi")
		})
		t.Run(tc.name+" as SVG", func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".svg")
			require.NoError(t, tc.save(path))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Contains(t, string(b[:min(len(b), 512)]), "<svg")
			assert.Contains(t, string(b), "scenario time")
		})
		t.Run(tc.name+" refuses other formats", func(t *testing.T) {
			assert.ErrorContains(t, tc.save(filepath.Join(dir, tc.name+".jpg")), ".png or .svg")
		})
	}
	var b bytes.Buffer
	require.NoError(t, q.WriteTable(&b))
	assert.Contains(t, b.String(), "low-water 20")
	assert.Contains(t, b.String(), "no low-water (39)")
}

func TestNiceTicks(t *testing.T) {
	assert.Equal(t, 25.0, niceStep(180.0/8))
	assert.Equal(t, 25.0, niceStep(100.0/4))
	assert.Equal(t, 200.0, niceStep(1000.0/8))
	assert.Equal(t, 0.5, niceStep(0.4))
	ts := ticks(100, 25, "")
	require.Len(t, ts, 5)
	assert.Equal(t, "100", ts[4].Label)
}
