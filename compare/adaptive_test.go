package compare

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/loadtest"
)

// TestAdaptiveBesideFailsafe runs fusebox's adaptive limit and failsafe-go's
// adaptivelimiter (its defaults) in the same harness, loadtest's finite
// capacity supplier under synctest: the goodput in B (2× overload) and C
// (capacity 32 → 8 → 32), and the hang F, where failsafe-go never trips
// and sends calls into the hung supplier all along while fusebox trips and
// sends at most its limit's worth (one probe per reset period after).
// make compare runs it and writes its figures to out/compare/adaptive.txt.
func TestAdaptiveBesideFailsafe(t *testing.T) {
	sc := loadtest.CapacityScenarios()
	for _, s := range []loadtest.CapacityScenario{sc[1], sc[2]} {
		if raceEnabled {
			s.Duration = raceDurations[s.Name[0]]
		}
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			fb := runCapacity(t, s, loadtest.Sizing{Slots: 20, Adaptive: true})
			fs := runCapacity(t, s, loadtest.Sizing{Limiter: failsafeLimiter})
			// What any sizing can serve is bounded by the supplier's
			// capacity: in B, 110 % of failsafe-go's goodput would be
			// all of it (docs/adaptive.md).
			c := s.Capacity()
			t.Logf("fusebox %.0f/s, failsafe-go %.0f/s (%.0f %%); the supplier's capacity %.0f/s: fusebox %.1f %% of it, failsafe-go %.1f %%, 110 %% of failsafe-go would be %.1f %%",
				fb.Goodput, fs.Goodput, 100*fb.Goodput/fs.Goodput, c, 100*fb.Goodput/c, 100*fs.Goodput/c, 110*fs.Goodput/c)
			assert.Greater(t, fb.Goodput, fs.Goodput)
		})
	}
	t.Run(sc[5].Name, func(t *testing.T) {
		t.Parallel()
		f := sc[5]
		fb := runCapacity(t, f, loadtest.Sizing{Slots: 20, Adaptive: true})
		fs := runCapacity(t, f, loadtest.Sizing{Limiter: failsafeLimiter})
		t.Logf("fusebox: trip %v after the onset, %d calls into the hang in 15 s; failsafe-go: no trip, %d calls into the hang (limit %d at the onset)",
			fb.FirstOpen-f.HangAt, fb.HungAll, fs.HungAll, fs.LimitAtHang)
		assert.NotZero(t, fb.FirstOpen)
		assert.Zero(t, fs.FirstOpen, "failsafe-go's limiter has no breaker to trip")
		assert.Greater(t, fs.HungAll, fb.HungAll)
	})
}

// raceDurations shorten B under the race detector, which makes a run some
// ten times dearer; C runs in full (its step is at 10–20 s).
var raceDurations = map[byte]time.Duration{'B': 10 * time.Second, 'C': 30 * time.Second}

func runCapacity(t *testing.T, s loadtest.CapacityScenario, z loadtest.Sizing) loadtest.CapacityRun {
	t.Helper()
	var run loadtest.CapacityRun
	synctest.Test(t, func(t *testing.T) {
		var err error
		run, err = loadtest.RunCapacity(t.Context(), s, z)
		require.NoError(t, err)
	})
	return run
}

// failsafeLimiter is failsafe-go's adaptivelimiter with its defaults (limit
// 1–200 from 20) in front of the harness's calls, each run on a goroutine
// of its own with a 5 s timeout, as the executor runs them.
func failsafeLimiter(ctx context.Context) (submit func(func(context.Context) error), stats func() (int, uint64), wait func()) {
	lim := adaptivelimiter.NewWithDefaults[any]()
	var refused atomic.Uint64
	var wg sync.WaitGroup
	submit = func(fn func(context.Context) error) {
		p, ok := lim.TryAcquirePermit()
		if !ok {
			refused.Add(1)
			return
		}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := fn(cctx); err != nil {
				p.Drop()
				return
			}
			p.Record()
		})
	}
	stats = func() (int, uint64) { return lim.Limit(), refused.Load() }
	return submit, stats, wg.Wait
}
