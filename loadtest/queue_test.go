package loadtest

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQueueScenario(t *testing.T) {
	t.Parallel()
	cfg := DefaultQueue()
	var rep *QueueReport
	synctest.Test(t, func(t *testing.T) {
		var err error
		rep, err = RunQueue(t.Context(), cfg)
		require.NoError(t, err)
	})
	require.Len(t, rep.Runs, 2)
	with, without := rep.Runs[0], rep.Runs[1]
	assert.Equal(t, 500, with.LowWater, "default: half the queue")
	assert.Equal(t, 999, without.LowWater, "no low-water mark: Queue−1")

	t.Run("identical traffic, and the supplier drains at its rate", func(t *testing.T) {
		for _, run := range rep.Runs {
			s := run.Summary
			assert.Equal(t, 10000, s.Offered, "%s: 10/s for 1000 s", run.Name)
			assert.Equal(t, s.Offered, s.Accepted+s.RejectedOpen+s.RejectedFull+s.RejectedBusy, run.Name)
			assert.Equal(t, s.Accepted, s.Served+s.TimedOut+s.QueueTimedOut+s.Errors+s.CutOff, run.Name)
			assert.InDelta(t, 8, s.ServedPerSecond, 0.01, run.Name)
			assert.Zero(t, s.QueueTimedOut+s.TimedOut, "%s: the queue timeout exceeds the longest wait", run.Name)
			for _, sec := range run.Seconds {
				assert.LessOrEqual(t, sec.QueueMax, cfg.Queue, "%s: second %d", run.Name, sec.T)
			}
		}
	})

	t.Run("the queue is full after about 500 s (10/s in, 8/s out)", func(t *testing.T) {
		for _, run := range rep.Runs {
			assert.InDelta(t, 500, secsOf(t, run.Summary.FullAfter, "full queue"), 1, run.Name)
			assert.Equal(t, "queue-full", run.Cycles[0].Reason, run.Name)
			assert.Equal(t, cfg.Queue, run.Seconds[499].QueueMax, "%s: full in second 499", run.Name)
		}
	})

	t.Run("with the low-water mark: open ~62.5 s (500 calls at 8/s), closed ~250 s", func(t *testing.T) {
		require.Len(t, with.Cycles, 2, "trips at ≈500 s and ≈812.5 s")
		for _, c := range with.Cycles {
			assert.InDelta(t, 62.5, secsOf(t, c.OpenFor, "close"), 0.3)
			assert.Equal(t, "queue-drained", c.ClosedBy)
		}
		assert.InDelta(t, 250, secsOf(t, with.Cycles[0].ClosedFor, "second trip"), 0.5, "500 places at +2/s")
		assert.Nil(t, with.Cycles[1].ClosedFor, "still closed when the run ends")
		assert.InDelta(t, 500, with.Seconds[563].QueueMax, 10, "it closed at the low-water mark")
		assert.Positive(t, with.Summary.RejectedOpen, "while open, calls fail fast")
	})

	t.Run("without it the breaker flaps", func(t *testing.T) {
		s := without.Summary
		// Every call that leaves a full queue closes the breaker, every
		// arrival that finds it full again trips it: about twice a second.
		assert.Greater(t, s.Cycles, 500)
		assert.Less(t, s.Open.Max, 0.2, "each open period ends with the next completed call")
		assert.Less(t, s.Closed.Max, 1.0)
		assert.Greater(t, s.Cycles, 100*with.Summary.Cycles)
	})
}

func TestQueueValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*QueueConfig)
		want string
	}{
		{"a queue of one", func(c *QueueConfig) { c.Queue = 1 }, "Queue"},
		{"low water at the top", func(c *QueueConfig) { c.LowWater = c.Queue }, "LowWater"},
		{"no service", func(c *QueueConfig) { c.ServiceRate = 0 }, "ServiceRate"},
		{"no supplier slots", func(c *QueueConfig) { c.SupplierSlots = 0 }, "SupplierSlots"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultQueue()
			tc.edit(&c)
			_, err := RunQueue(t.Context(), c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("the executor refuses a reset timeout within invocation + queue timeout", func(t *testing.T) {
		c := DefaultQueue()
		c.ResetTimeout = c.InvocationTimeout + c.QueueTimeout
		_, err := RunQueue(t.Context(), c)
		assert.ErrorContains(t, err, "ResetTimeout (3m0s) must exceed")
	})
}
