package loadtest

import (
	"time"

	"github.com/fusebox-go/fusebox/executor"
)

// The defaults of executor.StuckConfig's zero values, documented there.
const (
	stuckMultiple = 8
	stuckMinAge   = 500 * time.Millisecond
)

// stuckConfig is the executor's default stuck criterion in scenario time.
// Its multiple of the supplier's p99 and its ceiling (half the invocation
// timeout) scale with the speed by themselves; its floor is an absolute
// duration, which clk converts, so that a compressed run judges a full
// bulkhead as a real one would. literal trips on any saturation instead.
func stuckConfig(clk clock, literal bool) executor.StuckConfig {
	if literal {
		return executor.StuckConfig{TripOnAnySaturation: true}
	}
	return executor.StuckConfig{MinAge: clk.wall(stuckMinAge)}
}
