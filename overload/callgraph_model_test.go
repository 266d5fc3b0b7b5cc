package overload

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/throttle"
)

// throttleModel runs the call graph's frontend throttle in a model for
// 60 s: 3 × C offered, 30 % critical, to a supplier that accepts critical
// calls first (as the backend's shedder does) up to C and refuses the
// rest, 100 ms at a time. perPriority gives each priority a throttle of
// its own (an executor per priority, the fusebox subject); otherwise one
// throttle sees every call (the fusebox-400 subject). It returns, over the last 30 s, the share of each priority's
// calls that the throttle let through, the share served, and what
// reached the supplier, ÷ C. The time is passed in, so the model is
// deterministic.
func throttleModel(t *testing.T, perPriority bool) (passed, served [priority.Levels]float64, load float64) {
	var ths [priority.Levels]*throttle.Throttle
	for p := range ths {
		if p == 0 || perPriority {
			th, err := throttle.New(throttle.Config{})
			require.NoError(t, err)
			ths[p] = th
		} else {
			ths[p] = ths[0]
		}
	}
	const (
		c        = 500 // the supplier's capacity, requests per second
		interval = 100 * time.Millisecond
		steps    = int(60 * time.Second / interval)
	)
	rng := rand.New(rand.NewPCG(1, 2))
	perInterval := int(3 * c * interval.Seconds())
	capacity := int(c * interval.Seconds())
	var attempted, through, ok [priority.Levels]int
	reached := 0
	for i := range steps {
		measured := i >= steps/2
		now := int64(i) * int64(interval)
		var sent []priority.Priority
		for j := range perInterval {
			p := priority.Sheddable
			if rng.Float64() < 0.3 {
				p = priority.Critical
			}
			if measured {
				attempted[p]++
			}
			if ths[p].Admit(now+int64(j)*int64(interval)/int64(perInterval), p) {
				sent = append(sent, p)
				if measured {
					through[p]++
				}
			}
		}
		if measured {
			reached += len(sent)
		}
		left := capacity
		for _, want := range []priority.Priority{priority.Critical, priority.Default, priority.Sheddable} {
			for _, p := range sent {
				if p != want {
					continue
				}
				accepted := left > 0
				if accepted {
					left--
					if measured {
						ok[p]++
					}
				}
				ths[p].Record(now+int64(interval), p, accepted)
			}
		}
	}
	for p := range served {
		if attempted[p] > 0 {
			passed[p] = float64(through[p]) / float64(attempted[p])
			served[p] = float64(ok[p]) / float64(attempted[p])
		}
	}
	return passed, served, float64(reached) / float64(capacity*(steps-steps/2))
}

// The supplier itself refuses about 1 % of the critical calls here: 45
// arrive in 100 ms on average, with a spread of 7, and it takes 50.
func TestAThrottlePerPriorityLetsCriticalThroughAndHoldsTheSupplierAtC(t *testing.T) {
	passed, served, load := throttleModel(t, true)
	t.Logf("critical let through %.1f %%, served %.1f %%; sheddable served %.1f %%; supplier %.2f × C",
		100*passed[priority.Critical], 100*served[priority.Critical], 100*served[priority.Sheddable], load)
	assert.GreaterOrEqual(t, passed[priority.Critical], 0.99, "critical let through")
	assert.GreaterOrEqual(t, served[priority.Critical], 0.97, "critical served")
	assert.Less(t, served[priority.Sheddable], 0.1, "sheddable served")
	assert.LessOrEqual(t, load, 1.1, "the supplier's load, × C")
}

// One throttle for every priority, as the fusebox subject has: it counts
// each priority apart, so the sheddable calls the supplier refuses do not
// throttle the critical ones it accepts.
func TestOneThrottleLetsCriticalThroughASupplierThatAcceptsIt(t *testing.T) {
	passed, served, load := throttleModel(t, false)
	t.Logf("critical let through %.1f %%, served %.1f %%; sheddable served %.1f %%; supplier %.2f × C",
		100*passed[priority.Critical], 100*served[priority.Critical], 100*served[priority.Sheddable], load)
	assert.GreaterOrEqual(t, passed[priority.Critical], 0.99, "critical let through")
	assert.GreaterOrEqual(t, served[priority.Critical], 0.97, "critical served")
	assert.LessOrEqual(t, load, 1.1, "the supplier's load, × C")
}
