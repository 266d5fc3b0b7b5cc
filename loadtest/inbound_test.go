package loadtest

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
)

// The scenario of docs/inbound.md, 30 s instead of a minute (the
// supplier is slow from 15 s on): make demo-inbound has the whole minute.
func TestInboundScenarioInVirtualTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := DefaultInbound()
		cfg.Duration = 30 * time.Second
		rep, err := RunInbound(t.Context(), cfg)
		require.NoError(t, err)
		none, fb := rep.Run("none"), rep.Run("fusebox")
		for _, r := range rep.Runs {
			for _, rr := range r.Routes {
				t.Logf("%s %s: sent %d served %d shed %d (retry-after %d) timed out %d, p99 healthy %v loaded %v, opened %v",
					r.Name, rr.Path, rr.Sent, rr.Served, rr.Shed, rr.ShedWithRetryAfter, rr.TimedOut, rr.HealthyP99, rr.LoadedP99, opened(rr))
			}
		}
		{ // without fusebox every worker ends up in /search and /home times out
			assert.Equal(t, 100, maxOf(none.BusyWorkers))
			home := none.Route("/home")
			assert.Less(t, home.ServedShare(), 0.5, "got %d of %d served", home.Served, home.Sent)
			assert.Greater(t, home.TimedOut, home.Sent/2)
		}
		{ // with fusebox /home is served and fast
			home := fb.Route("/home")
			assert.GreaterOrEqual(t, home.ServedShare(), 0.999, "got %d of %d served", home.Served, home.Sent)
			assert.LessOrEqual(t, home.LoadedP99, 2*home.HealthyP99, "p99 %v, healthy %v", home.LoadedP99, home.HealthyP99)
		}
		{ // /search sheds with 503 and Retry-After once its breaker opens on stuck slots
			search := fb.Route("/search")
			require.NotNil(t, search.BreakerOpenedAt)
			assert.Equal(t, "saturation", search.BreakerReason, "its slots were stuck")
			assert.Greater(t, *search.BreakerOpenedAt, DefaultInbound().SlowStart.Seconds())
			assert.Less(t, *search.BreakerOpenedAt, DefaultInbound().SlowEnd.Seconds()+1)
			assert.Greater(t, search.Shed, search.Sent/2)
			assert.Equal(t, search.Shed, search.ShedWithRetryAfter, "every refusal says when to come back")
			assert.LessOrEqual(t, maxOf(fb.BusyWorkers), DefaultInbound().SearchSlots+10)
		}
	})
}

func TestPrioritiesScenarioInVirtualTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := DefaultPriorities()
		cfg.Duration = 20 * time.Second
		rep, err := RunPriorities(t.Context(), cfg)
		require.NoError(t, err)
		for _, r := range rep.Runs {
			api := r.Route("/api")
			for p, c := range api.ByPriority {
				t.Logf("%s %s: sent %d served %d", r.Name, priority.Priority(p), c.Sent, c.Served)
			}
		}
		share := func(run string, p priority.Priority) float64 {
			c := rep.Run(run).Route("/api").ByPriority[p]
			return float64(c.Served) / float64(c.Sent)
		}
		{ // without a critical share every priority gets the same fraction
			// Within sampling: the critical requests are some 300, and
			// which of them meet a free slot depends on the order of
			// events at one virtual instant, which the race detector
			// changes. Their share ranged 0.24–0.43 over 14 runs under
			// -race (a delta of 0.1 failed 2 of them) while the default
			// one's stayed at 0.32–0.33; with a share, critical gets 1.
			assert.InDelta(t, share("fusebox", priority.Default), share("fusebox", priority.Critical), 0.15)
			assert.Less(t, share("fusebox", priority.Critical), 0.6)
		}
		{ // with it critical requests are all served and sheddable ones are refused first
			assert.Equal(t, 1.0, share("fusebox+priorities", priority.Critical))
			// The reserve idles when critical requests do not use it: the
			// foreground keeps about what it had, the background pays.
			fg := func(run string) int {
				c := rep.Run(run).Route("/api").ByPriority
				return c[priority.Critical].Served + c[priority.Default].Served
			}
			assert.GreaterOrEqual(t, float64(fg("fusebox+priorities")), 0.9*float64(fg("fusebox")))
			assert.Less(t, share("fusebox+priorities", priority.Sheddable), 0.1)
			assert.Less(t, share("fusebox+priorities", priority.Sheddable), share("fusebox", priority.Sheddable))
		}
	})
}

func opened(rr RouteReport) string {
	if rr.BreakerOpenedAt == nil {
		return "never"
	}
	return fmt.Sprintf("%.2f s (%s)", *rr.BreakerOpenedAt, rr.BreakerReason)
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// The same scenario over loopback HTTP, shortened and scaled down to a
// third, so that a loaded CI machine keeps up: 30 workers, 45 requests a
// second to each route (still 3x what the workers serve once searches take
// 2 s); the supplier slows down half a second in, and each run lasts 5 s.
func TestInboundScenarioOverHTTP(t *testing.T) {
	cfg := DefaultInbound()
	cfg.Transport = HTTP
	cfg.Workers, cfg.SearchRate, cfg.HomeRate, cfg.SearchSlots, cfg.HomeSlots = 30, 45, 45, 12, 18
	cfg.Duration, cfg.SlowStart, cfg.SlowEnd = 5*time.Second, 500*time.Millisecond, time.Second
	rep, err := RunInbound(t.Context(), cfg)
	require.NoError(t, err)
	for _, r := range rep.Runs {
		for _, rr := range r.Routes {
			t.Logf("%s %s: sent %d served %d shed %d (retry-after %d) timed out %d other %d, p99 healthy %v loaded %v",
				r.Name, rr.Path, rr.Sent, rr.Served, rr.Shed, rr.ShedWithRetryAfter, rr.TimedOut, rr.Other, rr.HealthyP99, rr.LoadedP99)
		}
	}
	none, fb := rep.Run("none").Route("/home"), rep.Run("fusebox").Route("/home")
	assert.Less(t, none.ServedShare(), 0.9, "without fusebox /home times out")
	assert.GreaterOrEqual(t, fb.ServedShare(), 0.98, "with it /home is served")
	search := rep.Run("fusebox").Route("/search")
	require.NotNil(t, search.BreakerOpenedAt, "the breaker of /search opened")
	assert.Positive(t, search.Shed)
	assert.Equal(t, search.Shed, search.ShedWithRetryAfter, "every 503 has a Retry-After")
}
