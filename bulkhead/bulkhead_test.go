package bulkhead_test

import (
	"cmp"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fusebox-go/fusebox/bulkhead"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestNewValidatesConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     bulkhead.Config
		wantErr string // "" for a valid config
		wantLow int
	}{
		{"the zero config is 10 slots and no queue", bulkhead.Config{}, "", 0},
		{"negative slots are refused", bulkhead.Config{Slots: -3}, "bulkhead: Slots must be ≥ 1, or 0 for the default 10, got -3", 0},
		{"slots beyond 32 bits are refused", bulkhead.Config{Slots: 1 << 31}, "bulkhead: Slots must be ≤ 2147483647, got 2147483648", 0},
		{"a negative queue is refused", bulkhead.Config{Slots: 1, Queue: -1}, "bulkhead: Queue must be ≥ 0, got -1", 0},
		{"a negative low water is refused", bulkhead.Config{Slots: 1, Queue: 4, LowWater: -1}, "bulkhead: LowWater must be ≥ 0, got -1", 0},
		{"a low water without a queue is refused", bulkhead.Config{Slots: 1, LowWater: 2}, "bulkhead: LowWater must be 0 when Queue is 0, got 2", 0},
		{"a low water at the queue size is refused", bulkhead.Config{Slots: 1, Queue: 4, LowWater: 4}, "bulkhead: LowWater must be < Queue (4), got 4", 0},
		{"one slot and no queue is valid", bulkhead.Config{Slots: 1}, "", 0},
		{"the low water defaults to half the queue", bulkhead.Config{Slots: 2, Queue: 9}, "", 4},
		{"an explicit low water is kept", bulkhead.Config{Slots: 2, Queue: 9, LowWater: 8}, "", 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := bulkhead.New(tt.cfg)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				assert.Nil(t, b)
				return
			}
			require.NoError(t, err)
			slots := cmp.Or(tt.cfg.Slots, 10)
			assert.Equal(t, bulkhead.Stats{
				Free: slots, Slots: slots, QueueCap: tt.cfg.Queue, LowWater: tt.wantLow,
			}, b.Stats())
		})
	}
}

// TestIdleBulkheadsCostNoGoroutineAndLittleMemory keeps 10,000 used and then
// idle bulkheads alive and measures what they cost.
func TestIdleBulkheadsCostNoGoroutineAndLittleMemory(t *testing.T) {
	const n = 10_000
	all := make([]*bulkhead.Bulkhead, n)
	// Let the goroutines of earlier tests finish exiting first.
	goleak.VerifyNone(t)
	goroutines := runtime.NumGoroutine()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range all {
		b, err := bulkhead.New(bulkhead.Config{Slots: 10, Queue: 100})
		if err != nil {
			t.Fatal(err)
		}
		// Use it once, then leave it idle.
		for range 10 {
			b.TryAcquire()
		}
		for range 10 {
			b.Release()
		}
		all[i] = b
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perBulkhead := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	t.Logf("idle bulkhead: %.1f B heap", perBulkhead)
	assert.LessOrEqual(t, perBulkhead, 128.0, "heap per idle bulkhead")
	assert.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "goroutines")
	runtime.KeepAlive(all)
}
