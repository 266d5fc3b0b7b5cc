package shed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
)

// work is the CPU of one request in the models: capacity C = 500/s.
const (
	work     = 2 * time.Millisecond
	capacity = float64(time.Second / work)
)

// warmUp is a service's ordinary day before an overload: 0.8 x C.
var warmUp = phase{dur: 5 * time.Second, rate: 0.8 * capacity, work: work}

func newModel(yielding bool) *model {
	return &model{yielding: yielding, shedCost: 20 * time.Microsecond}
}

// simulate runs the phases against a default Shedder in a bubble.
func simulate(t *testing.T, m *model, cfg Config, phases []phase) []tally {
	t.Helper()
	var out []tally
	synctest.Test(t, func(t *testing.T) {
		s, err := newShedder(cfg, m.signal())
		require.NoError(t, err)
		s.rand = rand.New(rand.NewPCG(3, 4)).Uint64 // only the model calls Allow
		out = m.run(s, phases)
		st := s.Stats()
		t.Logf("shed by reason %v, by priority %v, admitted %d", st.ByReason, st.Shed, st.Admitted)
		require.NoError(t, s.Close())
	})
	return out
}

// simulateWatched is simulate with watch called on the shedder's Stats
// every 100 ms of the run; it also returns how often the busy signal was
// read (once a tick or look).
func simulateWatched(t *testing.T, m *model, cfg Config, phases []phase, watch func(Stats)) (out []tally, reads int64) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		sig := m.signal()
		busy := sig.busy
		sig.busy = func() float64 { reads++; return busy() }
		s, err := newShedder(cfg, sig)
		require.NoError(t, err)
		s.rand = rand.New(rand.NewPCG(3, 4)).Uint64
		done := make(chan struct{})
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			tk := time.NewTicker(100 * time.Millisecond)
			defer tk.Stop()
			for {
				select {
				case <-done:
					return
				case <-tk.C:
					watch(s.Stats())
				}
			}
		}()
		out = m.run(s, phases)
		close(done)
		<-watched
		require.NoError(t, s.Close())
	})
	return out, reads
}

// noisyOrQuiet picks a request's tenant: "noisy" 10 times as often as
// each of "quiet-0" and "quiet-1".
func noisyOrQuiet(r *rand.Rand) string {
	if v := r.IntN(12); v < 2 {
		return fmt.Sprintf("quiet-%d", v)
	}
	return "noisy"
}

// others returns the share of the requests of tenants other than "noisy"
// served in time, and how many arrived.
func (t tally) others() (float64, int) {
	var arrived, good int
	for key, c := range t.byKey {
		if key != "noisy" {
			arrived += c[0]
			good += c[1]
		}
	}
	return float64(good) / float64(arrived), arrived
}

func goodput(tl tally, d time.Duration) float64 { return float64(tl.good) / d.Seconds() }

// kind is a model's handler, and how its server reads the signals:
// exactly, or as a real server does (model.realReadings).
type kind struct {
	name     string
	yielding bool
	real     bool
}

// model returns a model of the kind.
func (k kind) model() *model {
	m := newModel(k.yielding)
	if k.real {
		m.realReadings()
	}
	return m
}

// kinds returns both handlers, each with both readings.
func kinds() []kind {
	var out []kind
	for _, real := range []bool{false, true} {
		for _, y := range []bool{false, true} {
			name := map[bool]string{false: "a handler that never yields", true: "a handler that yields"}[y]
			if real {
				name += ", a real server's readings"
			}
			out = append(out, kind{name, y, real})
		}
	}
	return out
}

// yielding returns the yielding handler with both readings.
func yielding() []kind {
	var out []kind
	for _, k := range kinds() {
		if k.yielding {
			out = append(out, k)
		}
	}
	return out
}

func TestBelowCapacityAlmostNothingIsShed(t *testing.T) {
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			tl := simulate(t, k.model(), Config{}, []phase{{dur: 60 * time.Second, rate: 0.8 * capacity, work: work}})[0]
			share := float64(tl.shed) / float64(tl.arrived)
			t.Logf("shed %d of %d (%.3f %%)", tl.shed, tl.arrived, 100*share)
			assert.LessOrEqual(t, share, 0.005, "shed at 0.8 x capacity")
		})
	}
}

func TestALongOverloadIsHeldAndItsEndFollowed(t *testing.T) {
	for _, k := range kinds() {
		for _, x := range []float64{1.5, 3, 6} {
			t.Run(fmt.Sprintf("%s at %gx", k.name, x), func(t *testing.T) {
				ph := []phase{
					{dur: 5 * time.Second, rate: 0.8 * capacity, work: work},
					{dur: 30 * time.Second, rate: x * capacity, work: work},
					{dur: 30 * time.Second, rate: x * capacity, work: work},
					{dur: 2 * time.Second, rate: 0.5 * capacity, work: work},
					{dur: 10 * time.Second, rate: 0.5 * capacity, work: work},
				}
				tl := simulate(t, k.model(), Config{}, ph)
				first, second := goodput(tl[1], ph[1].dur)/capacity, goodput(tl[2], ph[2].dur)/capacity
				ending := float64(tl[3].shed) / float64(tl[3].arrived)
				after := float64(tl[4].shed) / float64(tl[4].arrived)
				t.Logf("goodput %.1f %% then %.1f %% of C; shed in the 2 s after %.2f %%, then %.2f %%", 100*first, 100*second, 100*ending, 100*after)
				// The model's goroutines meet in a different order from run to
				// run: at 6x a yielding handler's first half measured 0.89 to
				// 0.91 of C over 20 runs, so 6x asks 0.85 of both kinds.
				want := 0.9
				if x == 6 {
					want = 0.85
				}
				assert.GreaterOrEqual(t, first, want, "goodput in the first half of the overload")
				assert.GreaterOrEqual(t, second, want, "goodput in the second half: the estimate must not drift")
				assert.GreaterOrEqual(t, second, first-0.03, "the second half no worse than the first: no drift")
				assert.LessOrEqual(t, ending, 0.15, "shed in the 2 s after the overload")
				assert.Zero(t, tl[4].shed, "shed once the overload has ended")
			})
		}
	}
}

func TestACapacityStepIsFollowedDownAndUp(t *testing.T) {
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			rate := 1.5 * capacity
			ph := []phase{
				{dur: 10 * time.Second, rate: rate, work: work},
				{dur: 20 * time.Second, rate: rate, work: 2 * work},
				{dur: 10 * time.Second, rate: rate, work: work},
			}
			tl := simulate(t, k.model(), Config{}, ph)
			for i, c := range []float64{capacity, capacity / 2, capacity} {
				g := goodput(tl[i], ph[i].dur) / c
				t.Logf("phase %d: goodput %.1f %% of its capacity", i, 100*g)
				assert.GreaterOrEqual(t, g, 0.85, "phase %d", i)
			}
		})
	}
}

func TestASlowSupplierWithTheCPUIdleShedsNothing(t *testing.T) {
	// Half the requests wait 2 s on a supplier, half 20 ms; each needs
	// 0.2 ms of CPU: at 1.5 x C (of the CPU-bound handler) the CPU is 15 %
	// busy and about 750 requests are in flight.
	for _, k := range yielding() {
		t.Run(k.name, func(t *testing.T) {
			tl := simulate(t, k.model(), Config{}, []phase{{
				dur: 30 * time.Second, rate: 1.5 * capacity, work: 200 * time.Microsecond,
				wait: func(r *rand.Rand) time.Duration {
					if r.IntN(2) == 0 {
						return 2 * time.Second
					}
					return 20 * time.Millisecond
				},
			}})[0]
			t.Logf("fast requests shed: %d of %d; all shed: %d of %d", tl.fastShed, tl.fastArrived, tl.shed, tl.arrived)
			assert.Zero(t, tl.fastShed, "fast requests shed")
		})
	}
}

func TestASlowSupplierOnABusyHostIsNotRefusedForWhatIsInFlight(t *testing.T) {
	// The slow supplier again, on a host whose other processes take the
	// CPU: each request waits 30 ms more for it, above the target, so
	// overloads start. About 750 requests are in flight, waiting on the
	// supplier, not for the CPU: the in-flight limit (what completes in an
	// interval, about 75) must not refuse them (it refused 90 % when it
	// applied to any overload).
	for _, k := range yielding() {
		t.Run(k.name, func(t *testing.T) {
			m := k.model()
			m.steal = 30 * time.Millisecond
			var st Stats
			synctest.Test(t, func(t *testing.T) {
				s, err := newShedder(Config{}, m.signal())
				require.NoError(t, err)
				s.rand = rand.New(rand.NewPCG(3, 4)).Uint64
				m.run(s, []phase{{
					dur: 30 * time.Second, rate: 1.5 * capacity, work: 200 * time.Microsecond,
					wait: func(r *rand.Rand) time.Duration {
						if r.IntN(2) == 0 {
							return 2 * time.Second
						}
						return 20 * time.Millisecond
					},
				}})
				st = s.Stats()
				require.NoError(t, s.Close())
			})
			arrived := st.Admitted + st.Shed[priority.Default]
			t.Logf("shed by reason %v of %d", st.ByReason, arrived)
			assert.Less(t, float64(st.ByReason[Limit]), 0.01*float64(arrived), "refused by the in-flight limit")
			assert.Less(t, float64(st.ByReason[Queue]), 0.005*float64(arrived), "refused by the queue stage: the CPU has room")
		})
	}
}

func TestPrioritiesAreShedInOrder(t *testing.T) {
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			ph := []phase{warmUp, {dur: 30 * time.Second, rate: 3 * capacity, work: work,
				prio: func(r *rand.Rand) priority.Priority {
					switch v := r.IntN(100); {
					case v < 30:
						return priority.Critical
					case v < 65:
						return priority.Default
					}
					return priority.Sheddable
				}}}
			tl := simulate(t, k.model(), Config{}, ph)[1]
			served := func(p priority.Priority) float64 {
				return float64(tl.byPrio[p][1]) / float64(tl.byPrio[p][0])
			}
			t.Logf("served: critical %.2f %%, default %.2f %%, sheddable %.2f %%",
				100*served(priority.Critical), 100*served(priority.Default), 100*served(priority.Sheddable))
			assert.GreaterOrEqual(t, served(priority.Critical), 0.99, "critical served")
			assert.GreaterOrEqual(t, served(priority.Default), served(priority.Sheddable), "default before sheddable")
		})
	}
}

func TestANoisyTenantIsShedFirst(t *testing.T) {
	// One tenant sends 10 times what each of two others sends, 3 x C in
	// all: the others (2/12 of 3 C, 0.5 C) fit, and each sends less
	// than a fair third of C.
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			ph := []phase{warmUp, {dur: 30 * time.Second, rate: 3 * capacity, work: work,
				tenant: noisyOrQuiet}}
			tl := simulate(t, k.model(), Config{}, ph)[1]
			others, _ := tl.others()
			noisy := float64(tl.byKey["noisy"][1]) / float64(tl.byKey["noisy"][0])
			t.Logf("served: others %.2f %%, noisy %.2f %%; goodput %.1f %% of C", 100*others, 100*noisy, 100*goodput(tl, ph[1].dur)/capacity)
			assert.GreaterOrEqual(t, others, 0.95, "the other tenants served")
		})
	}
}

func TestBelowCapacityOnABusyHostAlmostNothingIsShed(t *testing.T) {
	// 0.8 x C while another process takes 5 % of the CPU and each
	// request waits 30 ms more for it (the operating system runs the other
	// process): the run queue's delay is above the target, but the
	// service has CPU to spare and its own backlog does not grow.
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			m := k.model()
			m.hog, m.steal = 0.05, 30*time.Millisecond
			tl := simulate(t, m, Config{}, []phase{{dur: 60 * time.Second, rate: 0.8 * capacity, work: work}})[0]
			share := float64(tl.shed) / float64(tl.arrived)
			t.Logf("shed %d of %d (%.3f %%)", tl.shed, tl.arrived, 100*share)
			assert.LessOrEqual(t, share, 0.005, "shed at 0.8 x capacity on a busy host")
		})
	}
}

func TestAStarvedProcessDoesNotPileUpInFlight(t *testing.T) {
	// The noisy tenant of TestANoisyTenantIsShedFirst, on a host where
	// another process takes the CPU for 200 ms of every 300 ms: the
	// service gets a third of C, in bursts, and is sent 3 times that.
	// Handlers that share the CPU must not pile up in flight between the
	// bursts, or every request, the quiet tenants' too, ends late.
	for _, k := range yielding() {
		t.Run(k.name, func(t *testing.T) {
			m := k.model()
			m.hogEvery, m.hogFor = 300*time.Millisecond, 200*time.Millisecond
			third := phase{dur: 5 * time.Second, rate: 0.8 * capacity / 3, work: work}
			ph := []phase{third, {dur: 30 * time.Second, rate: capacity, work: work,
				tenant: noisyOrQuiet}}
			tl := simulate(t, m, Config{}, ph)[1]
			others, _ := tl.others()
			g := goodput(tl, ph[1].dur) / (capacity / 3)
			t.Logf("served: others %.2f %%; goodput %.1f %% of a third of C", 100*others, 100*g)
			// Seen over 30 runs: others 84-96 %, goodput 83-96 %; the brake that
			// let go between bursts gave 4.8 and 3.5 %. With the fair share taken
			// against the capacity estimate, the most completed in an interval
			// (a burst's), the other tenants got 50-56 %: they were refused as if
			// no tenant sent more than its share.
			assert.GreaterOrEqual(t, g, 0.5, "goodput, share of the capacity the service gets")
			assert.GreaterOrEqual(t, others, 0.8, "the other tenants served")
		})
	}
}

// drain is a last phase at a tenth of C, so that the requests of the
// phase before it end within the run, as the loopback rig waits for them.
var drain = phase{dur: time.Second, rate: 0.1 * capacity, work: work}

// The loopback rig's cell: a second at half of C, then 3 x C for 3 s,
// judged over those 3 s (the overload's onset included).
func onset(p phase) []phase {
	p.dur, p.rate, p.work = 3*time.Second, 3*capacity, work
	return []phase{{dur: time.Second, rate: 0.5 * capacity, work: work}, p, drain}
}

func TestServedLatencyAtThreeTimesCapacityStaysNearItsBelowCapacityLatency(t *testing.T) {
	// Handlers that share the CPU all slow down with what is in flight:
	// once the overload's onset has drained, the requests the shedder
	// serves at 3 x C take at most twice (p99) what they take at 0.8 x C.
	for _, k := range yielding() {
		t.Run(k.name, func(t *testing.T) {
			below := simulate(t, k.model(), Config{}, []phase{{dur: 10 * time.Second, rate: 0.8 * capacity, work: work}, drain})[0]
			ph := []phase{warmUp, {dur: 2 * time.Second, rate: 3 * capacity, work: work}, {dur: 10 * time.Second, rate: 3 * capacity, work: work}, drain}
			over := simulate(t, k.model(), Config{}, ph)[2]
			t.Logf("p99 served: %v at 0.8 x C, %v at 3 x C (goodput %.1f %% of C)", below.p99(), over.p99(), 100*goodput(over, ph[2].dur)/capacity)
			assert.LessOrEqual(t, over.p99(), 2*below.p99(), "p99 at 3 x C")
			assert.GreaterOrEqual(t, goodput(over, ph[2].dur), 0.95*capacity, "goodput")
		})
	}
}

func TestCriticalRequestsAreServedFromAnOverloadsOnset(t *testing.T) {
	for _, k := range yielding() {
		t.Run(k.name, func(t *testing.T) {
			ph := onset(phase{prio: func(r *rand.Rand) priority.Priority {
				if r.IntN(10) < 3 {
					return priority.Critical
				}
				return priority.Default
			}})
			tl := simulate(t, k.model(), Config{}, ph)[1]
			served := float64(tl.byPrio[priority.Critical][1]) / float64(tl.byPrio[priority.Critical][0])
			t.Logf("critical served %.2f %% of %d; goodput %.1f %% of C", 100*served, tl.byPrio[priority.Critical][0], 100*goodput(tl, ph[1].dur)/capacity)
			assert.GreaterOrEqual(t, served, 0.99, "critical served")
		})
	}
}

func TestQuietTenantsAreServedFromAnOverloadsOnset(t *testing.T) {
	for _, k := range yielding() {
		t.Run(k.name, func(t *testing.T) {
			ph := onset(phase{tenant: noisyOrQuiet})
			tl := simulate(t, k.model(), Config{}, ph)[1]
			others, arrived := tl.others()
			g := goodput(tl, ph[1].dur) / capacity
			t.Logf("quiet tenants served %.2f %% of %d; goodput %.1f %% of C", 100*others, arrived, 100*g)
			assert.GreaterOrEqual(t, others, 0.95, "the quiet tenants served")
			// A tenant above its share refused at random as well as by the caps
			// left the CPU idle between completions: 88 % of C.
			assert.GreaterOrEqual(t, g, 0.95, "goodput")
		})
	}
}

func TestAnOverloadsOnsetAddsLittleToTheServedLatency(t *testing.T) {
	// The loopback rig's load: evenly spaced arrivals, a second at half of
	// C, then the overload, starting with a sampler's tick or 70 ms after
	// one. Until the brake is on, requests are admitted faster than they
	// complete; what piles up then is served late. The brake comes on as
	// the pile starts (a look between the sampler's ticks), so the p99
	// from the onset stays near the p99 once it has drained: it was 10 and
	// 26 times it at 3 and 6 x C with the brake waiting for a tick, and 12
	// and 27 times it when the tick after a look let go of the brake
	// because the CPUs had not been full over its whole interval.
	//
	// With a real server's readings, a look that judged its own 10 ms
	// alone missed the onset when they read the CPUs short of full: 279
	// and 688 ms at 3 and 6 x C, 70 ms into an interval. There the bound
	// is 150 ms if more than 4 times the p99 after the onset: the network
	// is polled every 10 ms, and 10 ms of arrivals at 6 x C take 60 ms of
	// CPU to serve, so 2 polls before the brake are served 120 ms late.
	for _, k := range yielding() {
		t.Run(k.name, func(t *testing.T) {
			for _, x := range []float64{3, 6} {
				for _, offset := range []time.Duration{0, 70 * time.Millisecond} {
					t.Run(fmt.Sprintf("%gx, %v into an interval", x, offset), func(t *testing.T) {
						ph := []phase{
							{dur: time.Second + offset, rate: 0.5 * capacity, work: work, even: true},
							{dur: 3 * time.Second, rate: x * capacity, work: work, even: true},
							{dur: 5 * time.Second, rate: x * capacity, work: work, even: true},
							drain,
						}
						tl := simulate(t, k.model(), Config{}, ph)
						t.Logf("p99 served: %v from the onset, %v after it; goodput %.1f %% of C", tl[1].p99(), tl[2].p99(), 100*goodput(tl[1], ph[1].dur)/capacity)
						assert.LessOrEqual(t, tl[1].p99(), max(4*tl[2].p99(), 150*time.Millisecond), "p99 from the onset against p99 after it")
					})
				}
			}
		})
	}
}

func TestHandlersThatAlsoWaitOnASupplierKeepTheirGoodput(t *testing.T) {
	// Each request needs 2 ms of CPU and waits on a supplier besides, so
	// fewer complete than the CPU could serve while the brake holds what
	// completes in Target in flight; the capacity estimate follows the
	// completions down. A brake held while the CPU had room kept it there:
	// 60-76 % of C with a 28 ms supplier; letting go, 84-93 % over 20 runs
	// (median 92 %).
	for _, k := range yielding() {
		t.Run(k.name, func(t *testing.T) {
			for _, sup := range []time.Duration{10 * time.Millisecond, 28 * time.Millisecond, 38 * time.Millisecond} {
				t.Run(fmt.Sprint(sup), func(t *testing.T) {
					wait := func(*rand.Rand) time.Duration { return sup }
					ph := []phase{
						{dur: time.Second, rate: 0.5 * capacity, work: work, wait: wait},
						{dur: 2 * time.Second, rate: 2 * capacity, work: work, wait: wait},
						{dur: 6 * time.Second, rate: 2 * capacity, work: work, wait: wait},
						drain,
					}
					tl := simulate(t, k.model(), Config{}, ph)
					g := goodput(tl[2], ph[2].dur) / capacity
					t.Logf("supplier %v: goodput %.1f %% of C over the last 6 s of 2 x C", sup, 100*g)
					assert.GreaterOrEqual(t, g, 0.9, "goodput, share of C")
				})
			}
		})
	}
}

func TestShadowModeEstimatesTheCapacityEnforceModeDoes(t *testing.T) {
	// In Shadow mode the requests it would shed run all the same, and
	// complete: the capacity counted no more completions than requests
	// admitted, and read half of C all through a 1.5 x C overload. (It
	// reads a little less than in enforce mode, 370-480 against
	// 490-550/s: handlers that share the CPU with a pile that grows
	// complete fewer than C while their unfinished work piles up.)
	for _, k := range yielding() {
		t.Run(k.name, func(t *testing.T) {
			ph := []phase{warmUp, {dur: 3 * time.Second, rate: 1.5 * capacity, work: work}, {dur: 5 * time.Second, rate: 0.5 * capacity, work: work}}
			low, high := math.Inf(1), 0.0
			n := 0
			simulateWatched(t, k.model(), Config{Shadow: true}, ph, func(st Stats) {
				if n++; n > 55 && n <= 80 { // the overload, from its second half-second
					low, high = min(low, st.Capacity), max(high, st.Capacity)
				}
			})
			t.Logf("capacity in the overload: %.0f to %.0f /s (C %.0f)", low, high, capacity)
			assert.GreaterOrEqual(t, low, 0.65*capacity, "capacity, Shadow mode")
			assert.LessOrEqual(t, high, 1.25*capacity, "capacity, Shadow mode")
		})
	}
}

func TestTheCapacityIsNotAPileThatDrained(t *testing.T) {
	// Handlers that share the CPU end an onset's pile together: one
	// interval completed 288 requests of a CPU that completes 50, and the
	// caps followed that estimate for a second.
	for _, k := range yielding() {
		t.Run(k.name, func(t *testing.T) {
			ph := []phase{
				{dur: time.Second + 70*time.Millisecond, rate: 0.5 * capacity, work: work, even: true},
				{dur: 3 * time.Second, rate: 6 * capacity, work: work, even: true},
				drain,
			}
			high := 0.0
			simulateWatched(t, k.model(), Config{}, ph, func(st Stats) { high = max(high, st.Capacity) })
			t.Logf("the most capacity estimated: %.0f /s (C %.0f)", high, capacity)
			assert.LessOrEqual(t, high, 1.25*capacity, "capacity")
		})
	}
}

func TestTheLooksStopWhileTheCPUHasRoom(t *testing.T) {
	// Requests that wait on a supplier keep as many in flight as the
	// watch with the CPU 5 % busy: no pile. A pile read there was never
	// ended, and the sampler read the signals 7.6 times an interval
	// (every thread's times, on a real server) for as long as it lasted.
	for _, k := range yielding() {
		t.Run(k.name, func(t *testing.T) {
			ph := []phase{{dur: 30 * time.Second, rate: 0.5 * capacity, work: 200 * time.Microsecond,
				wait: func(r *rand.Rand) time.Duration { return time.Duration(r.ExpFloat64() * float64(100*time.Millisecond)) }}}
			tl, reads := simulateWatched(t, k.model(), Config{}, ph, func(Stats) {})
			perInterval := float64(reads) / 300
			t.Logf("signals read %.1f times an interval; shed %d of %d", perInterval, tl[0].shed, tl[0].arrived)
			assert.LessOrEqual(t, perInterval, 2.0, "reads an interval")
			assert.Zero(t, tl[0].shed, "shed")
		})
	}
}
