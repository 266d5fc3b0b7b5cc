package policy

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func spendAll(b *budget) int {
	n := 0
	for b.spend() == nil {
		n++
	}
	return n
}

func TestBudgetDecay(t *testing.T) {
	cfg, err := Budget{}.withDefaults("Budget", 0.1) // 10 %, a floor of 10, 10 s
	require.NoError(t, err)
	t.Run("an hour of quiet traffic counts as a Window's worth of calls", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBudget(cfg)
			for range 36000 { // 10 calls/s for an hour, no spend meanwhile
				b.call()
				time.Sleep(100 * time.Millisecond)
			}
			// 10 calls/s × 10 s = 100 recent calls: 10 % of them, plus the floor.
			assert.InDelta(t, 20, spendAll(b), 1)
		})
	})
	t.Run("spent calls decay: the floor comes back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBudget(cfg)
			assert.Equal(t, 10, spendAll(b), "the floor alone")
			time.Sleep(10 * time.Second) // e^-1 of the 10 spent is left
			assert.Equal(t, 6, spendAll(b))
		})
	})
	t.Run("an unlimited budget never refuses", func(t *testing.T) {
		b := newBudget(Budget{Unlimited: true})
		for range 1000 {
			require.NoError(t, b.spend())
		}
	})
}
