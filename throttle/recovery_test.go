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
