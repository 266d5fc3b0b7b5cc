package compare_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/compare"
)

// The scenarios run in virtual time where a library allows it: the
// invocation timeout is a virtual second and the numbers are exact.
// hystrix-go cannot run in a synctest bubble (each command starts two
// goroutines that never end), so it runs in real time with a 50 ms timeout.
const (
	unit     = time.Second
	realUnit = 50 * time.Millisecond
)

// inBubble runs f in a synctest bubble if the library permits, else
// directly with the real-time unit.
func inBubble(t *testing.T, bubble bool, f func(t *testing.T, unit time.Duration)) {
	if bubble {
		synctest.Test(t, func(t *testing.T) {
			f(t, unit)
			// Let timers the libraries started end in virtual time
			// (go-resiliency sleeps for the reset timeout after each
			// opening); a bubble must be empty when it ends.
			time.Sleep(10 * unit)
		})
		return
	}
	f(t, realUnit)
}

func hung(t *testing.T, lib compare.Lib, honours bool, u time.Duration) compare.HungResult {
	t.Helper()
	r, err := compare.Hung(lib, compare.ScenarioSettings(u), honours, u/50, 5*u, 10*u)
	require.NoError(t, err)
	return r
}

func bubbles(name string) bool { return name != "hystrix-go" && name != "hystrix-go-async" }

// fusebox's own promises under a hung supplier, in virtual time: calls
// that find the bulkhead full are refused at once; the supplier has no
// latency history, so its bulkhead counts as busy until half of its calls
// are older than half the invocation timeout, and the call that finds it
// full then trips the breaker (with a history of 100 ms calls that comes
// about 0.5 s after the hang; see executor.StuckConfig), no more
// functions run than there are slots even when they ignore their context,
// and no caller waits much longer than the invocation timeout.
func TestFuseboxUnderAHungSupplier(t *testing.T) {
	for _, honours := range []bool{false, true} {
		t.Run(fmt.Sprintf("honours context %v", honours), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := hung(t, compare.LibByName("fusebox"), honours, unit)
				every := unit / 50
				assert.Equal(t, 10*every, r.FirstFast, "got first refusal at %v, want at the 11th arrival", r.FirstFast)
				// The fifth call (4 arrivals in) is T/2 old at T/2 + 4
				// arrivals: half the slots are stuck.
				assert.Equal(t, unit/2+5*every, r.FirstOpen, "got first open refusal at %v, want right after the call of T/2 + 4 arrivals", r.FirstOpen)
				assert.Equal(t, 20, r.Outcomes[compare.Full], "got %d saturated refusals, want 19 busy ones (0.20T to 0.56T) and the one that trips", r.Outcomes[compare.Full])
				assert.LessOrEqual(t, r.MaxRunning, 10, "got %d functions running at once, want at most the 10 slots", r.MaxRunning)
				// A function that ignores its context gets a short grace
				// (min(5 ms, T/10)) to give its slot back before its future
				// resolves anyway: the caller is never held longer.
				assert.LessOrEqual(t, r.MaxWait, unit+unit/10, "got a caller waiting %v, want at most the invocation timeout plus the grace", r.MaxWait)
				if honours {
					// The slots free at the timeout, so the probe after the
					// reset timeout gets one and reaches the supplier.
					assert.Equal(t, 11, r.Reached, "got %d calls reaching the supplier, want 10 + the probe", r.Reached)
				} else {
					// The 10 functions never return: the probe finds no slot
					// (ProbeDeferred) and nothing more reaches the supplier.
					assert.Equal(t, 10, r.Reached, "got %d calls reaching the supplier, want the 10 slots", r.Reached)
					assert.Equal(t, 10, r.RunningAtEnd)
				}
			})
		})
	}
}

// Every library through the same scenario; logged for the record (the
// report command prints it as a table), with the bound checked for the
// libraries that claim one and keep it.
func TestEveryLibraryUnderAHungSupplier(t *testing.T) {
	for _, lib := range compare.Libs() {
		for _, honours := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/honours context %v", lib.Name, honours), func(t *testing.T) {
				skipGoZeroUnderRace(t, lib.Name)
				inBubble(t, bubbles(lib.Name), func(t *testing.T, u time.Duration) {
					r := hung(t, lib, honours, u)
					t.Logf("calls %d, reached %d (last at %.2fT), first fast refusal %.2fT, open %.2fT, running max %d (at end %d), callers blocked max %d (at end %d), longest wait %.2fT, outcomes %v",
						r.Calls, r.Reached, units(r.Last, u), units(r.FirstFast, u), units(r.FirstOpen, u),
						r.MaxRunning, r.RunningAtEnd, r.MaxBlocked, r.BlockedAtEnd, units(r.MaxWait, u), r.Outcomes)
					assert.Positive(t, r.Reached)
				})
			})
		}
	}
}

// Breakers that count failures and have no bulkhead learn of a hang only
// from its first timeout: until then every caller is let through and stays
// stuck (T/every = 50 of them), and a supplier that ignores its context
// never fails at all, so they never refuse anyone.
func TestFailureCountingBreakersLearnOnlyFromTimeouts(t *testing.T) {
	for _, name := range []string{"gobreaker", "go-zero", "sentinel-golang"} {
		t.Run(name, func(t *testing.T) {
			skipGoZeroUnderRace(t, name)
			synctest.Test(t, func(t *testing.T) {
				r := hung(t, compare.LibByName(name), true, unit)
				assert.GreaterOrEqual(t, r.FirstFast, unit, "got a first refusal at %v, want none before the first timeout", r.FirstFast)
				assert.GreaterOrEqual(t, r.MaxRunning, 50, "got %d calls stuck at once, want every call of the first T", r.MaxRunning)
				assert.Positive(t, r.Outcomes[compare.Open], "got no refusal after the timeouts, want the breaker to refuse")

				r = hung(t, compare.LibByName(name), false, unit)
				assert.Equal(t, time.Duration(-1), r.FirstFast, "got a refusal at %v from a supplier that never failed", r.FirstFast)
				assert.Equal(t, r.Calls, r.RunningAtEnd, "got %d of %d calls stuck at the end, want all", r.RunningAtEnd, r.Calls)
				time.Sleep(10 * unit)
			})
		})
	}
}

func units(d, u time.Duration) float64 {
	if d < 0 {
		return -1
	}
	return float64(d) / float64(u)
}

// A caller that awaits its result and submits again at once, through one
// slot, must never be refused: the slot is released before the future
// completes.
func TestFuseboxSequentialCallerIsNeverRefused(t *testing.T) {
	r, err := compare.Sequential(compare.LibByName("fusebox"), 2000)
	require.NoError(t, err)
	assert.Zero(t, r.Spurious(), "got %d spurious refusals in %d calls, want none (%v)", r.Spurious(), r.Calls, r.Outcomes)
}

func TestEveryBoundedLibraryWithASequentialCaller(t *testing.T) {
	for _, lib := range compare.Libs() {
		if !lib.Bounded {
			continue
		}
		t.Run(lib.Name, func(t *testing.T) {
			r, err := compare.Sequential(lib, 500)
			require.NoError(t, err)
			t.Logf("%d calls: %d spurious refusals %v", r.Calls, r.Spurious(), r.Outcomes)
		})
	}
}

// Results of calls admitted before the trip never decide anything.
func TestFuseboxLateResultsDecideNothing(t *testing.T) {
	for _, lib := range compare.LateLibs() {
		if lib.Name != "fusebox-breaker" {
			continue
		}
		synctest.Test(t, func(t *testing.T) {
			r, err := compare.Late(lib, compare.ScenarioSettings(unit))
			require.NoError(t, err)
			assert.False(t, r.Decided(), "got %+v, want every late result ignored", r)
			assert.Equal(t, compare.Change{Before: "half-open", After: "closed"}, r.ProbeAfterFailure,
				"got %v, want the probe's success to close the breaker", r.ProbeAfterFailure)
		})
	}
}

func TestEveryBreakerWithLateResults(t *testing.T) {
	for _, lib := range compare.LateLibs() {
		t.Run(lib.Name, func(t *testing.T) {
			inBubble(t, lib.Bubble, func(t *testing.T, u time.Duration) {
				r, err := compare.Late(lib, compare.ScenarioSettings(u))
				require.NoError(t, err)
				t.Logf("success while open: %v; failure while probing: %v, then probe succeeds: %v; success while probing: %v",
					r.SuccessWhileOpen, r.FailureWhileProbing, r.ProbeAfterFailure, r.SuccessWhileProbing)
			})
		})
	}
}

// skipGoZeroUnderRace skips go-zero's breaker under the race detector:
// v1.10.3's errorWindow.String (core/breaker/breaker.go:268) reads its
// count outside the lock that add writes it under, so a refusal logged
// while another call records an error is a data race in go-zero itself.
// make test runs these cases again without -race.
func skipGoZeroUnderRace(t *testing.T, name string) {
	t.Helper()
	if name == "go-zero" && compare.RaceEnabled {
		t.Skip("go-zero v1.10.3 races in its own error window (breaker.go:268); make test runs it without -race")
	}
}
