package throttle_test

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/throttle"
)

const ms = int64(time.Millisecond)

// drive sends rate requests a second of priority p for d, from start, to
// a supplier that accepts at most capacity a second, and returns the
// requests sent to the supplier and those it accepted a second, on
// average over the last half of d (all of it if d is a second or less).
func drive(th *throttle.Throttle, start int64, d time.Duration, rate, capacity int, p priority.Priority) (sent, accepted int) {
	step := int64(time.Second) / int64(rate)
	end := start + int64(d)
	from := start
	if d > time.Second {
		from = start + int64(d)/2
	}
	secondAccepts := 0
	second := start / int64(time.Second)
	defer func() {
		secs := max(1, int((end-from)/int64(time.Second)))
		sent, accepted = sent/secs, accepted/secs
	}()
	for now := start; now < end; now += step {
		if s := now / int64(time.Second); s != second {
			second, secondAccepts = s, 0
		}
		if now < from {
			if th.Admit(now, p) {
				ok := secondAccepts < capacity
				if ok {
					secondAccepts++
				}
				th.Record(now, p, ok)
			}
			continue
		}
		if !th.Admit(now, p) {
			continue
		}
		sent++
		ok := secondAccepts < capacity
		if ok {
			secondAccepts++
			accepted++
		}
		th.Record(now, p, ok)
	}
	return sent, accepted
}

func TestAHealthySupplierIsNeverThrottled(t *testing.T) {
	th, err := throttle.New(throttle.Config{})
	require.NoError(t, err)
	sent, accepted := drive(th, 0, time.Minute, 100, 1000, priority.Default)
	assert.Equal(t, 100, sent)
	assert.Equal(t, 100, accepted)
	st := th.Stats()
	assert.Zero(t, st.Throttled)
	assert.Zero(t, st.Odds)
}

func TestTheLoadSentTracksWhatTheSupplierAccepts(t *testing.T) {
	for _, k := range []float64{1.1, 1.5, 2} {
		th, err := throttle.New(throttle.Config{K: [priority.Levels]float64{priority.Default: k}})
		require.NoError(t, err)
		// 4× the supplier's capacity, for a minute.
		sent, accepted := drive(th, 0, time.Minute, 400, 100, priority.Default)
		assert.InDelta(t, 100, accepted, 10, "K %v: the supplier is kept busy", k)
		assert.InDelta(t, k*100, float64(sent), 0.15*k*100, "K %v: the supplier sees about K times what it accepts", k)
	}
}

// driveMixed sends rate requests a second for d, their priorities in
// turn critical, default, sheddable, to a supplier of capacity requests a
// second; aware, the supplier takes critical ones first (each second, it
// keeps what critical work it will be sent out of the capacity left to the
// others), otherwise it takes the first capacity requests whatever their
// priority. It returns the share of each priority's requests the supplier
// accepted over the last half of d.
func driveMixed(th *throttle.Throttle, d time.Duration, rate, capacity int, aware bool) (served [priority.Levels]float64) {
	order := [3]priority.Priority{priority.Critical, priority.Default, priority.Sheddable}
	step := int64(time.Second) / int64(rate)
	var tried, ok [priority.Levels]int
	second, taken := int64(-1), [priority.Levels]int{}
	for i, now := 0, int64(0); now < int64(d); i, now = i+1, now+step {
		if s := now / int64(time.Second); s != second {
			second, taken = s, [priority.Levels]int{}
		}
		p := order[i%3]
		measured := now >= int64(d)/2
		if measured {
			tried[p]++
		}
		if !th.Admit(now, p) {
			continue
		}
		room := capacity - taken[priority.Critical] - taken[priority.Default] - taken[priority.Sheddable]
		if aware && p != priority.Critical {
			room -= rate/3 - taken[priority.Critical] // what critical work is still to come this second
		}
		accepted := room > 0
		if accepted {
			taken[p]++
			if measured {
				ok[p]++
			}
		}
		th.Record(now, p, accepted)
	}
	for p := range served {
		if tried[p] > 0 {
			served[p] = float64(ok[p]) / float64(tried[p])
		}
	}
	return served
}

// A supplier that fails every priority alike: each priority's odds come
// from its own counts, but its own K throttles sheddable work first.
func TestSheddableIsThrottledFirstAndCriticalLast(t *testing.T) {
	th, err := throttle.New(throttle.Config{})
	require.NoError(t, err)
	served := driveMixed(th, time.Minute, 300, 100, false)
	st := th.Stats()
	t.Logf("odds %.3f; served %.3f", st.Odds, served)
	// Default's K (1.02) is hardly above sheddable's (1): which of the
	// two is throttled more is chance; both far more than critical work.
	assert.Greater(t, st.Odds[priority.Sheddable], 0.6)
	assert.Greater(t, st.Odds[priority.Default], 0.6)
	assert.Less(t, st.Odds[priority.Critical], 0.1)
	assert.Greater(t, served[priority.Critical], 0.8)
	assert.Less(t, served[priority.Sheddable], 0.2)
	assert.Greater(t, st.Throttled[priority.Sheddable], st.Throttled[priority.Critical])
	assert.Equal(t, st.Requests, st.ByPriority[0].Requests+st.ByPriority[1].Requests+st.ByPriority[2].Requests)
}

// A supplier that refuses sheddable work and takes every critical call
// (as an inbound shedder does) sees every critical call: the sheddable
// failures do not count against critical requests.
func TestASupplierThatTakesCriticalWorkSeesAllOfIt(t *testing.T) {
	th, err := throttle.New(throttle.Config{})
	require.NoError(t, err)
	served := driveMixed(th, time.Minute, 300, 110, true)
	st := th.Stats()
	t.Logf("odds %.3f; served %.3f", st.Odds, served)
	assert.Zero(t, st.Odds[priority.Critical])
	assert.Equal(t, 1.0, served[priority.Critical])
	assert.Greater(t, st.Odds[priority.Sheddable], 0.8)
	assert.Equal(t, st.ByPriority[priority.Critical].Requests, st.ByPriority[priority.Critical].Accepts)
}

func TestNothingIsThrottledBelowTheMinimumVolume(t *testing.T) {
	th, err := throttle.New(throttle.Config{MinRequests: 1000})
	require.NoError(t, err)
	// 10 a second for 10 s, none accepted: 100 requests in the window.
	for now := int64(0); now < int64(10*time.Second); now += 100 * ms {
		require.True(t, th.Admit(now, priority.Default))
		th.Record(now, priority.Default, false)
	}
}

func TestTheThrottleLetsGoOnceTheOverloadEnds(t *testing.T) {
	th, err := throttle.New(throttle.Config{})
	require.NoError(t, err)
	drive(th, 0, time.Minute, 400, 100, priority.Default)
	require.Greater(t, th.Stats().Odds[priority.Default], 0.5)
	// The overload ends: 50 a second, all accepted. Within the window
	// (10 s) nothing is throttled any more.
	start := int64(time.Minute)
	var firstFull time.Duration = -1
	for s := range 20 {
		sent, _ := drive(th, start+int64(s)*int64(time.Second), time.Second, 50, 100, priority.Default)
		if sent == 50 && firstFull < 0 {
			firstFull = time.Duration(s+1) * time.Second
		}
	}
	require.GreaterOrEqual(t, firstFull, time.Duration(0), "never back to full goodput")
	assert.LessOrEqual(t, firstFull, 10*time.Second)
	t.Logf("full goodput %v after the overload ended", firstFull)
}

func TestConcurrentUse(t *testing.T) {
	th, err := throttle.New(throttle.Config{Window: time.Second})
	require.NoError(t, err)
	var wg sync.WaitGroup
	var clock atomic.Int64 // one clock for every goroutine, as a process has
	for g := range 8 {
		wg.Go(func() {
			for i := range 20000 {
				now := clock.Add(62_500) // 10 s over the 8 loops
				if th.Admit(now, priority.Priority(g%3)) {
					th.Record(now, priority.Priority(g%3), i%4 == 0)
				}
			}
		})
	}
	wg.Wait()
	st := th.Stats()
	assert.Greater(t, st.Throttled[priority.Sheddable], uint64(0))
}

func TestBadConfigIsAnErrorNamingTheField(t *testing.T) {
	cases := []struct {
		cfg  throttle.Config
		want string
	}{
		{throttle.Config{Window: time.Millisecond}, "Config.Window"},
		{throttle.Config{MinRequests: -1}, "Config.MinRequests"},
		{throttle.Config{K: [priority.Levels]float64{priority.Critical: 0.5}}, "Config.K[critical]"},
		{throttle.Config{K: [priority.Levels]float64{priority.Sheddable: math.NaN()}}, "Config.K[sheddable]"},
		{throttle.Config{K: [priority.Levels]float64{priority.Default: math.Inf(1)}}, "Config.K[default]"},
	}
	for _, tc := range cases {
		_, err := throttle.New(tc.cfg)
		require.ErrorContains(t, err, tc.want)
	}
}
