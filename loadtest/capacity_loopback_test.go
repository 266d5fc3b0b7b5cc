package loadtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCapacityOverLoopback runs the adaptive bulkhead over real HTTP on
// 127.0.0.1 (the demo's path: fusehttp in front of a server with finite
// capacity), in real time, so it asserts no timing but what a loaded
// machine cannot move: calls are served before the hang, the breaker opens
// only after its onset and within the run, and no more calls reach the
// hung server before the trip than the limit ever allowed. 16 slots for
// 200 calls/s of 20 ms: a stall of the machine (calls older than the
// stuck criterion's 500 ms floor) cannot also fill the bulkhead.
func TestCapacityOverLoopback(t *testing.T) {
	t.Parallel()
	s := CapacityScenario{
		Name: "loopback", Duration: 4 * time.Second, Rate: constRate(200),
		Servers: constSrv(8), MaxSrv: 8, Median: capService, HangAt: time.Second, Seed: 3,
	}
	for _, z := range []Sizing{{Slots: 16, Adaptive: true, Loopback: true}, {Slots: 16, Loopback: true}} {
		t.Run(fmt.Sprintf("adaptive=%v", z.Adaptive), func(t *testing.T) {
			t.Parallel()
			run, err := RunCapacity(t.Context(), s, z)
			require.NoError(t, err)
			require.Positive(t, run.PerSecond[0], "%+v: calls served over loopback before the hang", z)
			require.Positive(t, run.Opens, "%+v: the hang must open the breaker", z)
			require.GreaterOrEqual(t, run.FirstOpen, s.HangAt, "%+v: opened before the hang", z)
			require.Less(t, run.FirstOpen, s.Duration, "%+v: opened only as the run ended", z)
			require.Equal(t, 1, run.Opens, "%+v: one hang, one opening", z)
			most := 0
			for _, l := range run.Limits {
				require.True(t, l >= 1 && l <= 256, "%+v: limit %d out of bounds", z, l)
				most = max(most, l)
			}
			require.Positive(t, run.HungCalls, "%+v", z)
			require.LessOrEqual(t, run.HungCalls, most, "%+v: more calls into the hang than slots", z)
			t.Logf("%+v: limit at the onset %d, opened %v after it, %d calls into the hang before", z,
				run.LimitAtHang, run.FirstOpen-s.HangAt, run.HungCalls)
		})
	}
}
