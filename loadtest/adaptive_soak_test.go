package loadtest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestAdaptiveSoak (make soak-adaptive; FUSEBOX_SOAK=1) plays the healthy
// scenarios for 10 minutes of virtual time each with the adaptive limit,
// E's bursts twenty times over, and cold starts of each under other seeds:
// the breaker must never open on a supplier that is only busy or slow, and
// the limit must not drift (the goodput of the last minute stays within
// 10 % of the first full minute's).
func TestAdaptiveSoak(t *testing.T) {
	if os.Getenv("FUSEBOX_SOAK") == "" {
		t.Skip("the soak runs with make soak-adaptive (FUSEBOX_SOAK=1)")
	}
	healthy := CapacityScenarios()[:5]
	for _, s := range healthy {
		s.Duration = 10 * time.Minute
		t.Run("10 min/"+s.Name, func(t *testing.T) {
			t.Parallel()
			run := runCapacity(t, s, Sizing{Slots: 20, Adaptive: true})
			first, last := minuteGoodput(run.PerSecond, 1), minuteGoodput(run.PerSecond, 9)
			worst, over, windows := minuteVariation(run.Limits)
			t.Logf("goodput %.0f/s; minute 2 %.0f/s, minute 10 %.0f/s; opens %d; busy refusals %d; limit at the end %d; "+
				"the limit's coefficient of variation over 60-s windows from 2 s: worst %.3f, %d of %d over 0.10",
				run.Goodput, first, last, run.Opens, run.Refused, run.Limits[len(run.Limits)-1], worst, over, windows)
			assert.Zero(t, run.Opens, "a healthy supplier's breaker never opens")
			assert.InEpsilon(t, first, last, 0.10, "the last minute's goodput stays within 10 %% of the second's")
		})
	}
	for _, s := range healthy {
		for seed := uint64(2); seed <= 4; seed++ {
			s := s
			s.Seed = seed
			t.Run(fmt.Sprintf("cold start %d/%s", seed, s.Name), func(t *testing.T) {
				t.Parallel()
				run := runCapacity(t, s, Sizing{Slots: 20, Adaptive: true})
				t.Logf("goodput %.0f/s, first 2 s %v/s, opens %d", run.Goodput, run.PerSecond[:2], run.Opens)
				assert.Zero(t, run.Opens, "a cold start never opens the breaker")
			})
		}
	}
}

// minuteVariation is the limit's coefficient of variation over every 60-s
// window of limits (sampled every capSample) that starts at 2 s or later,
// one a second: the worst, and how many of how many windows are over 0.10.
func minuteVariation(limits []int) (worst float64, over, windows int) {
	const minute, second = int(time.Minute / capSample), int(time.Second / capSample)
	for from := 2 * second; from+minute <= len(limits); from += second {
		cv := variation(limits[from : from+minute])
		worst = max(worst, cv)
		if windows++; cv > 0.10 {
			over++
		}
	}
	return worst, over, windows
}

// minuteGoodput is the mean goodput per second over minute m (from 0).
func minuteGoodput(perSecond []int, m int) float64 {
	sum := 0
	for _, n := range perSecond[m*60 : (m+1)*60] {
		sum += n
	}
	return float64(sum) / 60
}
