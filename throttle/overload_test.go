package throttle_test

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/throttle"
)

// fleetRun is what a fleet of throttles did against an overloaded supplier.
type fleetRun struct {
	load     float64       // sent to the supplier during the overload's second half, × capacity
	recovery time.Duration // from the overload's end to the first second every request succeeded; -1: none
}

// runFleet drives 50 clients, each with a default throttle and a Poisson
// stream of its share, against a supplier that accepts 1,000 requests a
// second (a token bucket of 100 ms) and fails the rest: 10 s at 0.5 × its
// capacity, 30 s at load ×, then 20 s at 0.5 ×. Time is the run's own, in
// steps of 5 ms; answers come at the end of the step.
func runFleet(t *testing.T, load float64, seed uint64) fleetRun {
	t.Helper()
	const (
		clients  = 50
		capacity = 1000.0
		step     = 5 * time.Millisecond
		warmup   = 10
		overload = 30
		after    = 20
	)
	ths := make([]*throttle.Throttle, clients)
	rngs := make([]*rand.Rand, clients)
	next := make([]float64, clients) // seconds
	for i := range ths {
		th, err := throttle.New(throttle.Config{})
		require.NoError(t, err)
		ths[i], rngs[i] = th, rand.New(rand.NewPCG(seed, uint64(i)))
	}
	secs := warmup + overload + after
	offered, succeeded, sent := make([]int, secs), make([]int, secs), make([]int, secs)
	tokens, burst, last := 100.0, 100.0, 0.0
	type arrival struct {
		at float64 // seconds
		c  int
	}
	var arrivals []arrival
	type answer struct {
		c  int
		ok bool
	}
	var answers []answer
	for k := range int(time.Duration(secs) * time.Second / step) {
		now := time.Duration(k) * step
		sec := int(now / time.Second)
		rate := 0.5
		if sec >= warmup && sec < warmup+overload {
			rate = load
		}
		mean := clients / (rate * capacity)
		// This step's arrivals in the order they arrive, so that no
		// client is served first by the supplier's tokens.
		arrivals = arrivals[:0]
		for i := range ths {
			if k == 0 {
				next[i] = rngs[i].ExpFloat64() * mean
			}
			for ; next[i] < (now + step).Seconds(); next[i] += rngs[i].ExpFloat64() * mean {
				arrivals = append(arrivals, arrival{next[i], i})
			}
		}
		slices.SortFunc(arrivals, func(a, b arrival) int { return cmp.Compare(a.at, b.at) })
		for _, ar := range arrivals {
			// The token bucket, refilled up to the request's instant.
			tokens = min(burst, tokens+capacity*(ar.at-last))
			last = ar.at
			offered[sec]++
			if !ths[ar.c].Admit(int64(ar.at*1e9), priority.Default) {
				continue
			}
			sent[sec]++
			ok := tokens >= 1
			if ok {
				tokens--
				succeeded[sec]++
			}
			answers = append(answers, answer{ar.c, ok})
		}
		for _, a := range answers {
			ths[a.c].Record(int64(now+step), priority.Default, a.ok)
		}
		answers = answers[:0]
	}
	var r fleetRun
	n := 0
	for s := warmup + overload/2; s < warmup+overload; s++ {
		n += sent[s]
	}
	r.load = float64(n) / (overload / 2) / capacity
	r.recovery = -1
	for s := warmup + overload; s < secs; s++ {
		if succeeded[s] == offered[s] {
			r.recovery = time.Duration(s-warmup-overload) * time.Second
			break
		}
	}
	return r
}

// TestAnOverloadedSupplierSeesAtMost1Point1TimesItsCapacity: with the
// default configuration, a fleet of 50 clients offering 2 and 4 times what
// the supplier accepts sends it no more than 1.1 times that.
func TestAnOverloadedSupplierSeesAtMost1Point1TimesItsCapacity(t *testing.T) {
	for _, load := range []float64{2, 4} {
		for seed := range uint64(3) {
			r := runFleet(t, load, seed)
			t.Logf("%v× offered, seed %d: supplier %.3f× its capacity", load, seed, r.load)
			assert.LessOrEqual(t, r.load, 1.1, "%v× offered, seed %d", load, seed)
			assert.GreaterOrEqual(t, r.load, 0.98, "%v× offered, seed %d: the supplier is kept busy", load, seed)
		}
	}
}

// TestAFleetIsBackToFullGoodputWithinTheWindow: when the overload ends,
// every request of a whole second succeeds again within the window (10 s)
// after it, in every client of the fleet.
func TestAFleetIsBackToFullGoodputWithinTheWindow(t *testing.T) {
	for _, load := range []float64{2, 4} {
		for seed := range uint64(3) {
			r := runFleet(t, load, seed)
			t.Logf("%v× offered, seed %d: full goodput %v after the overload", load, seed, r.recovery)
			require.GreaterOrEqual(t, r.recovery, time.Duration(0), "%v× offered, seed %d: never back to full goodput", load, seed)
			assert.Less(t, r.recovery, 10*time.Second, "%v× offered, seed %d", load, seed)
		}
	}
}
