package fleet

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecode(t *testing.T) {
	valid := `{"v":1,"replica":"r1","supplier":"payments","kind":"open","reason":"saturation","age_ns":1000,"probe_in_ns":5000000000}`
	t.Run("a valid message round-trips", func(t *testing.T) {
		m, err := decode([]byte(valid))
		require.NoError(t, err)
		assert.Equal(t, message{V: 1, Replica: "r1", Supplier: "payments", Kind: kindOpen, Reason: "saturation", Age: 1000, ProbeIn: 5e9}, m)
		again, err := decode(encode(m))
		require.NoError(t, err)
		assert.Equal(t, m, again)
	})
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON is refused", `payments opened`, "not a JSON object"},
		{"an empty payload is refused", ``, "not a JSON object"},
		{"another version is refused", strings.Replace(valid, `"v":1`, `"v":2`, 1), "version 2"},
		{"an unknown field is refused", strings.Replace(valid, `"v":1`, `"v":1,"x":1`, 1), "unknown field"},
		{"an unknown kind is refused", strings.Replace(valid, `"open"`, `"explode"`, 1), "kind"},
		{"a missing replica is refused", strings.Replace(valid, `"r1"`, `""`, 1), "replica"},
		{"a supplier with a control character is refused", strings.Replace(valid, `"payments"`, `"pay\u0000ments"`, 1), "supplier"},
		{"a supplier too long is refused", strings.Replace(valid, `"payments"`, `"`+strings.Repeat("p", 300)+`"`, 1), "supplier"},
		{"a negative age is refused", strings.Replace(valid, `1000`, `-1`, 1), "out of range"},
		{"a probe time beyond a hundred years is refused", strings.Replace(valid, `5000000000`, `9223372036854775807`, 1), "out of range"},
		{"a number too large for the field is refused", strings.Replace(valid, `5000000000`, `1e400`, 1), "cannot unmarshal"},
		{"a close with a probe time is refused", strings.Replace(valid, `"open"`, `"close"`, 1), "close message"},
		{"trailing data is refused", valid + `{}`, "after the message"},
		{"a seq beyond 15 digits is refused", `{"v":1,"replica":"r1","supplier":"payments","kind":"reset","reason":"","age_ns":0,"seq":1000000000000000}`, "seq"},
		{"a payload over 2 KiB is refused", valid + strings.Repeat(" ", 2048), "at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode([]byte(tc.in))
			require.ErrorIs(t, err, errMalformed)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestAged(t *testing.T) {
	m := message{Age: int64(time.Second), ProbeIn: int64(3 * time.Second)}
	assert.Equal(t, message{Age: int64(3 * time.Second), ProbeIn: int64(time.Second)}, m.aged(2*time.Second))
	assert.Equal(t, int64(0), m.aged(time.Minute).ProbeIn, "a probe time that has passed is now")
	assert.Equal(t, m, m.aged(-time.Second), "a key cannot be younger than written")
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"v":1,"replica":"r1","supplier":"payments","kind":"open","reason":"saturation","age_ns":1,"probe_in_ns":5}`))
	f.Add([]byte(`{"v":1,"replica":"r1","supplier":"payments","kind":"close","reason":"probes-succeeded","age_ns":1}`))
	f.Fuzz(func(t *testing.T, p []byte) {
		m, err := decode(p) // never panics
		if err == nil {
			again, err := decode(encode(m))
			require.NoError(t, err)
			require.Equal(t, m, again)
		}
	})
}
