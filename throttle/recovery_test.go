package throttle_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/throttle"
)

// TestAStarvedClientLetsGoOnceTheOverloadEnds: a client that got a small
// share of an overloaded supplier's accepts (40 a second offered, 1
// accepted) throttles nearly everything; when the overload ends (10 a
// second, all accepted) it must be back to full goodput within the window,
// as a client with a larger share is. Its short span then often holds no
// request it sent, which must not hand the decision back to the window of
// the overload.
func TestAStarvedClientLetsGoOnceTheOverloadEnds(t *testing.T) {
	for run := range 20 {
		th, err := throttle.New(throttle.Config{})
		require.NoError(t, err)
		drive(th, 0, time.Minute, 40, 1, priority.Default)
		require.Greater(t, th.Stats().Odds[priority.Default], 0.8)
		start := int64(time.Minute)
		firstFull := time.Duration(-1)
		for s := range 60 {
			sent, _ := drive(th, start+int64(s)*int64(time.Second), time.Second, 10, 100, priority.Default)
			if sent == 10 && firstFull < 0 {
				firstFull = time.Duration(s+1) * time.Second
			}
		}
		t.Logf("run %d: full goodput %v after the overload ended", run, firstFull)
		require.GreaterOrEqual(t, firstFull, time.Duration(0), "run %d: not back to full goodput in 60 s", run)
		assert.LessOrEqual(t, firstFull, 10*time.Second, "run %d", run)
	}
}

// TestAFleetIsBackToFullGoodputASecondAfterTheOverload: when a fleet's
// overload (2 and 4 times what the supplier accepts) falls back to half of
// it, every request succeeds again from the next second on: the second in
// which it ended still holds the supplier's failures of the overload's
// last requests. A client whose own demand stays above half of its
// overload's for that second may take one more (1 seed of 8 allowed).
func TestAFleetIsBackToFullGoodputASecondAfterTheOverload(t *testing.T) {
	for _, load := range []float64{2, 4} {
		within := 0
		for seed := range uint64(8) {
			r := runFleet(t, load, seed)
			t.Logf("%v× offered, seed %d: full goodput %v after the overload", load, seed, r.recovery)
			assert.True(t, r.recovery >= 0 && r.recovery <= 2*time.Second,
				"%v× offered, seed %d: full goodput %v after the overload, want at most 2s", load, seed, r.recovery)
			if r.recovery >= 0 && r.recovery <= time.Second {
				within++
			}
		}
		assert.GreaterOrEqual(t, within, 7, "%v× offered: seeds back to full goodput within 1s, of 8", load)
	}
}
