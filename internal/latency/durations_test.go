package latency

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

var bounds = [NumBuckets]time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}

func TestDurations(t *testing.T) {
	var h Durations
	assert.Equal(t, uint64(1), h.Add(0, 1, &bounds), "on the bound: its bucket")
	assert.Equal(t, uint64(2), h.Add(0, -5, &bounds), "negative counts as 0, in the first bucket")
	assert.Equal(t, uint64(1), h.Add(0, 2, &bounds))
	assert.Equal(t, uint64(1), h.Add(0, 100, &bounds), "beyond the last bound")
	assert.Equal(t, uint64(1), h.Add(2, 5, &bounds), "outcomes apart")
	assert.Zero(t, h.Add(3, 5, &bounds), "an unknown outcome counts nowhere")

	b, n, sum := h.Read(0)
	assert.Equal(t, [NumBuckets]uint64{2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, b, "cumulative")
	assert.Equal(t, uint64(4), n, "the call beyond the last bound is in the count")
	assert.Equal(t, time.Duration(103), sum)
	_, n, _ = h.Read(1)
	assert.Zero(t, n)
}
