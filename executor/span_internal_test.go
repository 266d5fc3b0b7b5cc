package executor

import (
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

func TestSpanEncoding(t *testing.T) {
	cases := []struct {
		name string
		d    time.Duration
		want time.Duration // decoded
	}{
		{"zero stays zero", 0, 0},
		{"a second to the microsecond", time.Second + 1500*time.Nanosecond, time.Second + time.Microsecond},
		{"just under half an hour in microseconds", (1<<31 - 1) * time.Microsecond, (1<<31 - 1) * time.Microsecond},
		{"an hour in milliseconds", time.Hour + 1500*time.Microsecond, time.Hour + time.Millisecond},
		{"twenty days in milliseconds", 20 * 24 * time.Hour, 20 * 24 * time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := spanOf(int64(c.d))
			assert.NotEqual(t, uint32(math.MaxUint32), s)
			assert.Equal(t, int64(c.want), spanNs(s))
		})
	}
	t.Run("beyond about 24 days it saturates: never old", func(t *testing.T) {
		assert.Equal(t, uint32(math.MaxUint32), spanOf(int64(30*24*time.Hour)))
	})
}

// The call record is most of what a call costs: with an int result it
// must fit the 192-byte size class.
func TestCallRecordFitsItsSizeClass(t *testing.T) {
	var c call[int]
	assert.LessOrEqual(t, unsafe.Sizeof(c), uintptr(192), "got a %d-byte call record, want at most 192", unsafe.Sizeof(c))
}
