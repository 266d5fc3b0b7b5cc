package executor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Acceptance 8: invalid configurations are refused with a message that
// names the field and, for the reset timeout, says why.
func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		cfg  executor.Config
		want []string // substrings; none means valid
	}{
		{"the zero config is valid (10 slots, 1s timeout, 5s reset)", executor.Config{}, nil},
		{"negative slots", executor.Config{Slots: -1}, []string{"payments: Slots must be ≥ 1, or 0 for the default 10, got -1"}},
		{"a negative queue", executor.Config{Queue: -1}, []string{"Queue must be ≥ 0, got -1"}},
		{"a negative invocation timeout", executor.Config{InvocationTimeout: -time.Second}, []string{"InvocationTimeout must be in [0, 876000h0m0s], got -1s"}},
		{"a negative queue timeout", executor.Config{Queue: 1, QueueTimeout: -1}, []string{"QueueTimeout must be in [0, 876000h0m0s]"}},
		{"a queue timeout without a queue", executor.Config{QueueTimeout: time.Second}, []string{"QueueTimeout (1s) needs a Queue"}},
		{"a low-water mark without a queue", executor.Config{LowWater: 1}, []string{"LowWater (1) needs a Queue"}},
		{"a low-water mark at the queue size", executor.Config{Queue: 4, LowWater: 4}, []string{"LowWater (4) must be below Queue (4)"}},
		{"R equal to T", executor.Config{InvocationTimeout: 5 * time.Second},
			[]string{"Breaker.ResetTimeout (5s) must exceed InvocationTimeout (5s)", "a probe admitted", "still held"}},
		{"R below T", executor.Config{InvocationTimeout: 30 * time.Second, Breaker: breaker.Config{ResetTimeout: 10 * time.Second}},
			[]string{"Breaker.ResetTimeout (10s) must exceed InvocationTimeout (30s)"}},
		{"R just above T", executor.Config{InvocationTimeout: 30 * time.Second, Breaker: breaker.Config{ResetTimeout: 30*time.Second + 1}}, nil},
		{"R ≤ T + queue wait (default queue wait = T)", executor.Config{Queue: 10, InvocationTimeout: 3 * time.Second},
			[]string{"Breaker.ResetTimeout (5s) must exceed InvocationTimeout (3s) + QueueTimeout (3s) = 6s", "queued behind"}},
		{"R ≤ T + an explicit queue wait", executor.Config{Queue: 10, InvocationTimeout: time.Second, QueueTimeout: 4 * time.Second},
			[]string{"InvocationTimeout (1s) + QueueTimeout (4s) = 5s"}},
		{"R > T + queue wait", executor.Config{Queue: 10, InvocationTimeout: time.Second, QueueTimeout: 3 * time.Second}, nil},
		{"breaker errors come through", executor.Config{Breaker: breaker.Config{FailureRate: 2}}, []string{"breaker: FailureRate must be in (0, 1]"}},
		{"more half-open probes than slots (issue 10.5)", executor.Config{Slots: 2, Breaker: breaker.Config{HalfOpenProbes: 3}},
			[]string{"Breaker.HalfOpenProbes (3) must not exceed Slots (2) + Queue (0)"}},
		{"more half-open probes than the default slots", executor.Config{Breaker: breaker.Config{HalfOpenProbes: 11}},
			[]string{"Breaker.HalfOpenProbes (11) must not exceed Slots (10)"}},
		{"as many probes as slots and queue places", executor.Config{Slots: 2, Queue: 1, Breaker: breaker.Config{HalfOpenProbes: 3, ResetTimeout: 3 * time.Second}}, nil},
		{"slots that do not fit the bulkhead's count are named as Slots", executor.Config{Slots: 1 << 31},
			[]string{"payments: Slots must be ≤ 2147483647, got 2147483648"}},
		{"a queue that does not fit", executor.Config{Queue: 1 << 31}, []string{"payments: Queue must be ≤ 2147483647, got 2147483648"}},
		{"executor and breaker fields are named in one error (issue 10.8)",
			executor.Config{Slots: -1, Breaker: breaker.Config{FailureRate: 2, WindowSize: -1}},
			[]string{"Slots must be ≥ 1", "breaker: FailureRate must be in (0, 1]", "WindowSize must be in"}},
		{"a window without a rate rule is refused (issue 10.8)", executor.Config{Breaker: breaker.Config{WindowSize: 50}},
			[]string{"payments: breaker: WindowSize needs a rate rule"}},
		{"several errors at once", executor.Config{Slots: -1, Queue: -1}, []string{"Slots", "Queue must be"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := executor.New("payments", tt.cfg)
			if len(tt.want) == 0 {
				require.NoError(t, err)
				require.NoError(t, ex.Close(t.Context()))
				return
			}
			require.Error(t, err)
			assert.Nil(t, ex)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	ex := newExecutor(t, executor.Config{})
	st := ex.Stats()
	assert.Equal(t, 10, st.Slots) // the default
	assert.Zero(t, st.QueueCap)
	assert.Equal(t, "payments", st.Breaker.Name, "the breaker is named after the supplier")
}

// Issue 10.8: a name that is not valid UTF-8 made the Prometheus collector
// panic inside every scrape; such names are refused where they enter.
func TestNamesMustBeValidUTF8(t *testing.T) {
	const bad = "pay\xffments"
	_, err := executor.New(bad, executor.Config{})
	require.ErrorContains(t, err, `the name "pay\xffments" is not valid UTF-8`)

	_, err = executor.NewGroup(executor.GroupConfig{Suppliers: map[string]executor.Config{bad: {Slots: 2}}})
	require.ErrorContains(t, err, "not valid UTF-8")

	g := newGroup(t, executor.GroupConfig{})
	ex, err := g.Executor(bad)
	require.ErrorContains(t, err, "not valid UTF-8")
	assert.Nil(t, ex)
	assert.Empty(t, g.Names(), "the group holds no executor for the bad name")
}

func TestNamesMustNotBeEmpty(t *testing.T) {
	_, err := executor.New("", executor.Config{})
	require.ErrorContains(t, err, "the supplier name must not be empty")

	_, err = executor.NewGroup(executor.GroupConfig{Suppliers: map[string]executor.Config{"": {Slots: 2}}})
	require.ErrorContains(t, err, "the supplier name must not be empty")

	g := newGroup(t, executor.GroupConfig{})
	ex, err := g.Executor("")
	require.ErrorContains(t, err, "the supplier name must not be empty")
	assert.Nil(t, ex)
	assert.Empty(t, g.Names(), "the group holds no executor for the empty name")
}
