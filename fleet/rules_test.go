package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
)

// Deterministic tests of the link's logic in virtual time, over the
// in-process hub (a 5 ms one-way latency); the same behaviours are shown
// against a real Redis in fleet_test.go.

const hubLatency = 5 * time.Millisecond

type vReplica struct {
	link *Link
	rec  fuseboxtest.Recorder
}

func (r *vReplica) payments(t *testing.T) *executor.Executor {
	ex, err := r.link.Group().Executor("payments")
	require.NoError(t, err)
	return ex
}

func (r *vReplica) events() []breaker.Event { return r.rec.Events() }

func startVirtualFleet(t *testing.T, h *hub, n int) []*vReplica {
	rs := make([]*vReplica, n)
	for i := range rs {
		r := &vReplica{}
		g := executor.GroupConfig{
			Default: executor.Config{Slots: 2, InvocationTimeout: time.Second,
				Breaker: breaker.Config{ResetTimeout: 3 * time.Second, ConsecutiveFailures: 1}},
			OnTransition: r.rec.Listen,
		}
		l, err := newLink(virtualConfig(fmt.Sprintf("r%d", i)), g, h)
		require.NoError(t, err)
		r.link = l
		r.payments(t)
		rs[i] = r
	}
	synctest.Wait()
	return rs
}

func closeAll(t *testing.T, rs []*vReplica) {
	for _, r := range rs {
		require.NoError(t, r.link.Close(context.Background()))
	}
}

func TestVirtualTripArrivesAfterTheLinkLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rs := startVirtualFleet(t, newHub(hubLatency), 3)
		defer closeAll(t, rs)
		tripped := time.Now()
		rs[0].payments(t).Breaker().Trip(breaker.Saturation)
		time.Sleep(time.Second)
		own := rs[0].events()[0]
		for _, r := range rs[1:] {
			evs := r.events()
			require.Len(t, evs, 1)
			e := evs[0]
			assert.Equal(t, breaker.Remote, e.Reason)
			assert.Equal(t, tripped.Add(hubLatency), e.Time, "opened one latency after the trip")
			// Durations are relative to the sender's clock at sending, so
			// the probe time is late by the one-way latency, exactly.
			assert.Equal(t, own.OpenUntil.Add(hubLatency), e.OpenUntil, "the same probe time, but for the latency")
		}
	})
}

func TestVirtualOneProbePerPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rs := startVirtualFleet(t, newHub(hubLatency), 5)
		defer closeAll(t, rs)
		var mu sync.Mutex
		var probes []time.Time
		healthy := false
		fn := func(context.Context) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			probes = append(probes, time.Now())
			if healthy {
				return 1, nil
			}
			return 0, errors.New("down")
		}
		rs[0].payments(t).Breaker().Trip(breaker.Saturation)
		start := time.Now()
		time.Sleep(hubLatency + time.Millisecond) // the trip reaches every replica
		// Every replica calls every 10 ms for ten reset periods.
		traffic := func(d time.Duration) {
			for range d / (10 * time.Millisecond) {
				for _, r := range rs {
					if f, err := executor.Submit(context.Background(), r.payments(t), fn); err == nil {
						_, _ = f.Await(context.Background())
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		traffic(30 * time.Second)
		mu.Lock()
		n := len(probes)
		for i := 1; i < n; i++ {
			assert.GreaterOrEqual(t, probes[i].Sub(probes[i-1]), 3*time.Second, "probe %d", i)
		}
		healthy = true
		mu.Unlock()
		assert.Equal(t, 9, n, "a probe every 3 s (+ a 10 ms call period) in 30 s, after the first 3 s")
		assert.GreaterOrEqual(t, probes[0].Sub(start), 3*time.Second)
		traffic(4 * time.Second)
		for _, r := range rs {
			_, err := executor.Submit(context.Background(), r.payments(t), fn)
			assert.NoError(t, err, "the fleet closed together")
		}
	})
}

func TestVirtualLeaseExpiresWhenTheHolderDies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rs := startVirtualFleet(t, newHub(hubLatency), 3)
		type probe struct {
			by int
			at time.Time
		}
		var mu sync.Mutex
		var probes []probe
		hang := func(i int) func(context.Context) (int, error) {
			return func(ctx context.Context) (int, error) {
				mu.Lock()
				probes = append(probes, probe{i, time.Now()})
				mu.Unlock()
				<-ctx.Done()
				return 0, ctx.Err()
			}
		}
		rs[0].payments(t).Breaker().Trip(breaker.Saturation)
		time.Sleep(hubLatency + time.Millisecond) // the trip reaches every replica
		dead := -1
		for range 1000 {
			for i, r := range rs {
				if i == dead {
					continue
				}
				_, _ = executor.Submit(context.Background(), r.payments(t), hang(i))
			}
			time.Sleep(10 * time.Millisecond)
			mu.Lock()
			if dead < 0 && len(probes) == 1 {
				// The holder dies mid-probe: its link goes silent.
				dead = probes[0].by
				go rs[dead].link.Close(context.Background())
			}
			mu.Unlock()
		}
		mu.Lock()
		defer mu.Unlock()
		require.GreaterOrEqual(t, len(probes), 2)
		first, second := probes[0], probes[1]
		assert.NotEqual(t, first.by, second.by)
		lease := leaseTTL(executor.GroupConfig{Default: executor.Config{InvocationTimeout: time.Second}}, "payments", DefaultMargin)
		gap := second.at.Sub(first.at)
		assert.GreaterOrEqual(t, gap, lease-DefaultMargin, "not before the lease expired")
		assert.LessOrEqual(t, gap, lease+2*DefaultMargin+10*time.Millisecond, "as soon as it expired")
		for i, r := range rs {
			if i != dead {
				require.NoError(t, r.link.Close(context.Background()))
			}
		}
	})
}

func TestVirtualLinkDownGivesHoldsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(hubLatency)
		rs := startVirtualFleet(t, h, 3)
		defer closeAll(t, rs)
		rs[0].payments(t).Breaker().Trip(breaker.Saturation)
		time.Sleep(time.Second)
		probeAt := rs[0].events()[0].OpenUntil
		for _, r := range rs {
			s := r.payments(t).Breaker().Stats()
			require.Equal(t, breaker.Open, s.State)
			assert.True(t, s.OpenUntil.After(probeAt.Add(time.Second)), "held past the probe time until the lease decides")
		}
		h.setDown(true)
		time.Sleep(100 * time.Millisecond)
		for i, r := range rs {
			assert.False(t, r.link.Stats().Up)
			s := r.payments(t).Breaker().Stats()
			assert.Equal(t, breaker.Open, s.State, "still protecting itself")
			// Each probes on its own at the probe time it learnt.
			assert.Equal(t, probeAt.Add(time.Duration(min(i, 1))*hubLatency), s.OpenUntil, "replica %d", i)
		}
		// Back up, empty: the links reconnect, rewrite their opens, and
		// hold their breakers again.
		h.setDown(false)
		time.Sleep(time.Second)
		for _, r := range rs {
			assert.True(t, r.link.Stats().Up)
			assert.GreaterOrEqual(t, r.link.Stats().Sessions, uint64(2))
		}
	})
}

// virtualGroup is the group of startVirtualFleet, without executors made
// in advance; listen, if not nil, hears every transition.
func virtualGroup(listen func(breaker.Event)) executor.GroupConfig {
	return executor.GroupConfig{
		Default:      executor.Config{InvocationTimeout: time.Second, Breaker: breaker.Config{ResetTimeout: 3 * time.Second, ConsecutiveFailures: 1}},
		OnTransition: listen,
	}
}

func TestVirtualATripReachesAReplicaThatMakesTheExecutorLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rs := startVirtualFleet(t, newHub(hubLatency), 2)
		defer closeAll(t, rs)
		inv, err := rs[0].link.Group().Executor("inventory")
		require.NoError(t, err)
		inv.Breaker().Trip(breaker.Saturation)
		// The probe time of the trip, from its event: the breaker's own
		// is held past it by the scheduler at once (a goroutine of its
		// own, which may run before the next line).
		probeAt := rs[0].events()[0].OpenUntil
		time.Sleep(time.Second)
		_, ok := rs[1].link.Group().Lookup("inventory")
		require.False(t, ok, "the wire makes no executor")
		st := rs[1].link.Stats()
		assert.Equal(t, uint64(1), st.Deferred)
		assert.Zero(t, st.Stale)

		// The first call for inventory makes the executor after the trip.
		ex, err := rs[1].link.Group().Executor("inventory")
		require.NoError(t, err)
		time.Sleep(pendingPoll + time.Millisecond) // the next poll, whatever its phase
		s := ex.Breaker().Stats()
		require.Equal(t, breaker.Open, s.State, "the trip remembered is applied")
		assert.Equal(t, breaker.Remote, s.Reason)
		e := rs[1].events()[0]
		assert.Equal(t, "inventory", e.Name)
		assert.Equal(t, probeAt.Add(hubLatency), e.OpenUntil, "the fleet's probe time")
		assert.Equal(t, uint64(1), rs[1].link.Stats().Applied)
	})
}

func TestVirtualLateReplicaLearnsFromTheOpenKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		deps bool
	}{
		{"a group that lists the supplier", true},
		{"a group that makes the executor on first use", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHub(hubLatency)
				rs := startVirtualFleet(t, h, 1)
				defer closeAll(t, rs)
				rs[0].payments(t).Breaker().Trip(breaker.Saturation)
				time.Sleep(time.Second)

				g := virtualGroup(nil)
				if tc.deps {
					g.Suppliers = map[string]executor.Config{"payments": g.Default}
				}
				late, err := newLink(virtualConfig("late"), g, h)
				require.NoError(t, err)
				defer func() { require.NoError(t, late.Close(context.Background())) }()
				time.Sleep(100 * time.Millisecond)
				require.True(t, late.Stats().Up)
				ex, err := late.Group().Executor("payments")
				require.NoError(t, err)
				time.Sleep(pendingPoll + time.Millisecond) // the next poll, whatever its phase
				s := ex.Breaker().Stats()
				assert.Equal(t, breaker.Open, s.State, "learnt from the key alone")
				assert.Equal(t, breaker.Remote, s.Reason)
				assert.Equal(t, uint64(1), late.Stats().Applied)
				assert.Equal(t, uint64(1), rs[0].link.Stats().Published, "nobody published again meanwhile")
			})
		})
	}
}

func TestVirtualTheWireNeverMakesExecutors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(hubLatency)
		rs := startVirtualFleet(t, h, 1)
		defer closeAll(t, rs)
		const n = 2000
		for i := range n {
			h.publish(encode(message{V: wireVersion, Replica: "x", Supplier: fmt.Sprintf("junk-%d", i), Kind: kindOpen,
				Reason: "manual", ProbeIn: int64(time.Second)}))
		}
		time.Sleep(time.Second)
		l := rs[0].link
		assert.Equal(t, []string{"payments"}, l.Group().Names())
		st := l.Stats()
		assert.Equal(t, uint64(n), st.Received)
		assert.Equal(t, uint64(n), st.Deferred+st.Stale+st.Overflow)
		l.pmu.Lock()
		remembered := len(l.pending)
		l.pmu.Unlock()
		assert.LessOrEqual(t, remembered, DefaultBuffer, "a bounded table")
		assert.Positive(t, remembered)
		// Remembered trips are forgotten once their probe time and a
		// lease have passed.
		time.Sleep(5 * time.Second)
		l.pmu.Lock()
		assert.Zero(t, len(l.pending))
		l.pmu.Unlock()
	})
}

func TestVirtualARemoteProbeTimeIsBoundedByTheLocalConfiguration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(hubLatency)
		rs := startVirtualFleet(t, h, 1)
		defer closeAll(t, rs)
		g := virtualGroup(nil)
		// 3 s reset, no back-off: 3 s, a 1.2 s lease and a 100 ms margin.
		limit := maxProbeIn(g, "payments", DefaultMargin)
		require.Equal(t, 4300*time.Millisecond, limit)
		sent := time.Now()
		h.publish(encode(message{V: wireVersion, Replica: "x", Supplier: "payments", Kind: kindOpen,
			Reason: "manual", ProbeIn: int64(maxDurationOnWire)}))
		time.Sleep(time.Second)
		st := rs[0].link.Stats()
		assert.Equal(t, uint64(1), st.Applied)
		assert.Equal(t, uint64(1), st.Clipped)
		e := rs[0].events()[0]
		assert.Equal(t, breaker.Remote, e.Reason)
		assert.Equal(t, sent.Add(hubLatency+limit), e.OpenUntil, "cut to the bound")

		// The bound grows with the local back-off and jitter.
		g.Default.Breaker.MaxResetTimeout = 10 * time.Second
		g.Default.Breaker.ResetJitter = 0.5
		assert.Equal(t, 15*time.Second+1300*time.Millisecond, maxProbeIn(g, "payments", DefaultMargin))
	})
}

func TestVirtualABlockingListenerNeitherStopsReceivingNorHoldsClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(hubLatency)
		rs := startVirtualFleet(t, h, 1)
		unblock := make(chan struct{})
		slow, err := newLink(virtualConfig("slow"), virtualGroup(func(e breaker.Event) {
			if e.Reason == breaker.Remote {
				<-unblock
			}
		}), h)
		require.NoError(t, err)
		_, err = slow.Group().Executor("payments")
		require.NoError(t, err)
		time.Sleep(100 * time.Millisecond)
		rs[0].payments(t).Breaker().Trip(breaker.Saturation) // the slow listener blocks on this one
		time.Sleep(time.Second)
		inv, err := rs[0].link.Group().Executor("inventory")
		require.NoError(t, err)
		inv.Breaker().Trip(breaker.Saturation)
		// Several health-check periods: the subscription still receives
		// and answers.
		time.Sleep(5 * DefaultHealthCheck)
		st := slow.Stats()
		assert.True(t, st.Up, "the link stays up")
		assert.Equal(t, uint64(2), st.Received, "the second trip is received while the listener blocks")
		assert.Zero(t, st.Downs)

		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		err = slow.Close(ctx)
		assert.Equal(t, 200*time.Millisecond, time.Since(start), "Close returns by its context")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), `applier`)
		assert.Contains(t, err.Error(), `"payments"`)
		close(unblock) // the abandoned goroutine ends once the listener returns
		closeAll(t, rs)
		synctest.Wait()
	})
}

func TestVirtualALateReplicaLearnsMoreOpenKeysThanItsBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(hubLatency)
		rs := startVirtualFleet(t, h, 1)
		defer closeAll(t, rs)
		g := virtualGroup(nil)
		g.Suppliers = map[string]executor.Config{}
		const n = 10
		for i := range n {
			name := fmt.Sprintf("s%d", i)
			g.Suppliers[name] = g.Default
			ex, err := rs[0].link.Group().Executor(name)
			require.NoError(t, err)
			ex.Breaker().Trip(breaker.Saturation)
		}
		time.Sleep(time.Second)
		cfg := virtualConfig("late")
		cfg.Buffer = 2
		late, err := newLink(cfg, g, h)
		require.NoError(t, err)
		defer func() { require.NoError(t, late.Close(context.Background())) }()
		time.Sleep(100 * time.Millisecond)
		st := late.Stats()
		assert.Equal(t, uint64(n), st.Applied, "every key, though the buffer holds 2")
		assert.Zero(t, st.Overflow)
		for name := range g.Suppliers {
			ex, ok := late.Group().Lookup(name)
			require.True(t, ok)
			assert.Equal(t, breaker.Open, ex.Breaker().State(), name)
		}
	})
}

// A trip whose send fails while the link stays up (in a cluster, a lane
// whose master was lost, sent to before the client has the new one) is
// retried with backoff, not kept until a next session that may never come:
// the other replicas open within the backoff, with reason Remote.
func TestVirtualAFailedSendIsRetriedWhileTheLinkIsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(hubLatency)
		rs := startVirtualFleet(t, h, 3)
		defer closeAll(t, rs)
		h.refuse.Store(3) // the trip's send and its first two retries
		tripped := time.Now()
		rs[0].payments(t).Breaker().Trip(breaker.Saturation)
		time.Sleep(time.Second)
		for _, r := range rs[1:] {
			evs := r.events()
			require.Len(t, evs, 1, "the trip reached the other replicas")
			assert.Equal(t, breaker.Remote, evs[0].Reason)
			// Retries after 50, 100 and 200 ms (DefaultBackoffMin, doubled):
			// the fourth send goes through 350 ms after the trip.
			assert.Equal(t, tripped.Add(350*time.Millisecond+hubLatency), evs[0].Time)
		}
		st := rs[0].link.Stats()
		assert.True(t, st.Up, "the link stayed up throughout")
		assert.Equal(t, uint64(1), st.PublishFailed)
		assert.Equal(t, uint64(1), st.Replayed)
		assert.Equal(t, uint64(1), st.Sessions, "no new session was needed")
	})
}

// A lease key that something other than a replica wrote, with a year to
// run, holds no replica open for longer than it would wait on its own: a
// loser waits at most a lease between two contentions, and once the open
// period's local bound has passed it probes on its own.
func TestVirtualAForgedLeaseHoldsNoLongerThanALease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHub(hubLatency)
		h.leases["payments"] = hubKey{payload: []byte("attacker"), expires: time.Now().Add(365 * 24 * time.Hour)}
		rs := startVirtualFleet(t, h, 2)
		defer closeAll(t, rs)
		rs[0].payments(t).Breaker().Trip(breaker.Saturation)
		g := executor.GroupConfig{Default: executor.Config{InvocationTimeout: time.Second,
			Breaker: breaker.Config{ResetTimeout: 3 * time.Second}}}
		bound := maxProbeIn(g, "payments", DefaultMargin) + leaseTTL(g, "payments", DefaultMargin)
		time.Sleep(bound + 2*leaseTTL(g, "payments", DefaultMargin))
		for i, r := range rs {
			s := r.payments(t).Breaker().Stats()
			assert.False(t, s.OpenUntil.After(time.Now()), "replica %d may probe: it is not held for the forged lease's year", i)
			_, err := executor.Submit(context.Background(), r.payments(t), func(context.Context) (int, error) { return 1, nil })
			assert.NoError(t, err, "replica %d probes", i)
		}
	})
}
