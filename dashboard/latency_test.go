package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
)

// The tile shows the executor's own latency percentiles (Stats.LatencyP50
// and LatencyP99), once it has a history.
func TestTilesShowTheExecutorsLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, "payments")
		h := newHandler(t, dashboard.Options{})
		h.Add(ex)
		for i := range 100 {
			_, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) {
				d := 10 * time.Millisecond
				if i%25 == 0 { // 4 %: the p99 is slow
					d = 200 * time.Millisecond
				}
				time.Sleep(d)
				return 0, nil
			})
			require.NoError(t, err)
		}
		w := do(h, http.MethodGet, "/api/snapshot", "", nil)
		require.Equal(t, http.StatusOK, w.Code)
		var s dashboard.Snapshot
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &s))
		p := tile(t, s, "payments")
		st := ex.Stats()
		assert.InDelta(t, float64(st.LatencyP50)/float64(time.Millisecond), p.LatencyP50MS, 0.001)
		assert.InDelta(t, float64(st.LatencyP99)/float64(time.Millisecond), p.LatencyP99MS, 0.001)
		assert.InDelta(t, 10, p.LatencyP50MS, 2.5, "buckets are 25 %% wide")
		assert.InDelta(t, 200, p.LatencyP99MS, 50)
	})
}
