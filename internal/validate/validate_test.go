package validate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each check returns the value in force and reports a bad field by name,
// in an error that names the supplier.
func TestChecks(t *testing.T) {
	cases := []struct {
		name  string
		check func(ck *Checker) any
		want  any
		bad   string // "" for none
	}{
		{"Slots 0 is the default", func(ck *Checker) any { return ck.Slots(0) }, DefaultSlots, ""},
		{"Slots below 0", func(ck *Checker) any { return ck.Slots(-1) }, -1, "Slots must be ≥ 1"},
		{"Slots beyond the bound", func(ck *Checker) any { return ck.Slots(MaxSize + 1) }, 0, "Slots must be ≤"},
		{"Queue 0 is none", func(ck *Checker) any { return ck.Count("Queue", 0) }, 0, ""},
		{"Queue below 0", func(ck *Checker) any { return ck.Count("Queue", -1) }, -1, "Queue must be ≥ 0"},
		{"a timeout of 0 is the default", func(ck *Checker) any { return ck.Timeout("InvocationTimeout", 0, time.Second) }, time.Second, ""},
		{"a negative timeout", func(ck *Checker) any { return ck.Timeout("InvocationTimeout", -1, time.Second) }, time.Duration(-1), "InvocationTimeout must be in"},
		{"QueueTimeout 0 with a queue is the invocation timeout", func(ck *Checker) any { return ck.QueueTimeout(4, 0, time.Second) }, time.Second, ""},
		{"QueueTimeout without a queue", func(ck *Checker) any { return ck.QueueTimeout(0, time.Second, time.Second) }, time.Second, "QueueTimeout (1s) needs a Queue"},
		{"LowWater 0 is half the queue", func(ck *Checker) any { return ck.LowWater(10, 0) }, 5, ""},
		{"LowWater at the queue's size", func(ck *Checker) any { return ck.LowWater(10, 10) }, 10, "LowWater (10) must be below Queue (10)"},
		{"LowWater without a queue", func(ck *Checker) any { return ck.LowWater(0, 3) }, 3, "LowWater (3) needs a Queue"},
		{"probes that fit", func(ck *Checker) any { ck.Probes(3, 2, 1); return nil }, nil, ""},
		{"probes that fill the bulkhead", func(ck *Checker) any { ck.Probes(4, 2, 1); return nil }, nil, "Breaker.HalfOpenProbes (4) must not exceed Slots (2) + Queue (1)"},
		{"a reset timeout over the invocation timeout", func(ck *Checker) any { ck.ResetTimeout(2*time.Second, time.Second, 0, 0); return nil }, nil, ""},
		{"a reset timeout within the invocation timeout", func(ck *Checker) any { ck.ResetTimeout(time.Second, time.Second, 0, 0); return nil }, nil, "Breaker.ResetTimeout (1s) must exceed InvocationTimeout (1s)"},
		{"a reset timeout within timeout and queue wait", func(ck *Checker) any { ck.ResetTimeout(3*time.Second, 2*time.Second, 2*time.Second, 4); return nil },
			nil, "must exceed InvocationTimeout (2s) + QueueTimeout (2s) = 4s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ck := &Checker{Name: "payments"}
			got := c.check(ck)
			assert.Equal(t, c.want, got)
			if c.bad == "" {
				assert.Empty(t, ck.Errs)
				return
			}
			require.Len(t, ck.Errs, 1)
			assert.Contains(t, ck.Errs[0].Error(), "executor: payments: ")
			assert.Contains(t, ck.Errs[0].Error(), c.bad)
		})
	}
}
