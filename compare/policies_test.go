package compare_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/compare"
)

// playPolicies runs every subject of the scenario in virtual time, 30 s
// of traffic each, and returns the results by name.
func playPolicies(t *testing.T, sc compare.PolicyScenario) map[string]compare.PolicyResult {
	out := map[string]compare.PolicyResult{}
	for _, sub := range sc.Subjects {
		synctest.Test(t, func(t *testing.T) {
			r, err := compare.RunPolicy(t.Context(), sc, sub, 1)
			require.NoError(t, err)
			out[sub.Name] = r
			t.Logf("%s / %s: load %.3f×, success %.1f %%, p50 %v, p99 %v", sc.Name, r.Name, r.Load(), 100*r.Success(), r.P50, r.P99)
		})
	}
	return out
}

func scenario(t *testing.T, name string) compare.PolicyScenario {
	for _, sc := range compare.PolicyScenarios(30 * time.Second) {
		if sc.Name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %q", name)
	return compare.PolicyScenario{}
}

func TestPolicyRetryStorm(t *testing.T) {
	r := playPolicies(t, scenario(t, "retry storm"))
	assert.InDelta(t, 1.75, r["fusebox, no budget"].Load(), 0.1)
	assert.InDelta(t, 1.75, r["failsafe-go, no budget"].Load(), 0.1, "the same naive policy in both")
	assert.LessOrEqual(t, r["fusebox, budget 10 %"].Load(), 1.15)
	// failsafe-go's budget bounds the retries in flight at once to a share
	// of the executions in flight, at least 3: a supplier that answers in
	// 10 ms never has that many, so the storm goes on.
	assert.Greater(t, r["failsafe-go, budget 10 %"].Load(), 1.5)
}

func TestPolicySlowTail(t *testing.T) {
	r := playPolicies(t, scenario(t, "slow tail"))
	assert.Greater(t, r["fusebox, no policy"].P99, 900*time.Millisecond)
	assert.Less(t, r["fusebox, budget 5 %"].P99, 100*time.Millisecond)
	assert.LessOrEqual(t, r["fusebox, budget 5 %"].Load(), 1.05)
}

func TestPolicyOverload(t *testing.T) {
	r := playPolicies(t, scenario(t, "overloaded supplier"))
	assert.Greater(t, r["fusebox, no budget"].Load(), 1.9)
	assert.Greater(t, r["failsafe-go, no budget"].Load(), 1.9)
	// 5 %, plus the floor: 10 at once and 10 per 10 s over the 30 s.
	bounded := r["fusebox, budget 5 %"]
	assert.LessOrEqual(t, bounded.Load(), 1.05+(10+30)/float64(bounded.Calls))
}
