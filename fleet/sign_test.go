package fleet

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSignedFrames(t *testing.T) {
	k1, k2 := []byte("0123456789abcdef-1"), []byte("0123456789abcdef-2")
	body := []byte(`{"v":1}`)
	signed := newSigner("shop", [][]byte{k1})
	sealed := signed.seal(body)
	for _, tc := range []struct {
		name string
		s    signer
		in   []byte
		ok   bool
	}{
		{"the signing key opens it", signed, sealed, true},
		{"a rotation's second key opens it", newSigner("shop", [][]byte{k2, k1}), sealed, true},
		{"another key refuses it", newSigner("shop", [][]byte{k2}), sealed, false},
		{"another fleet's prefix refuses it", newSigner("other", [][]byte{k1}), sealed, false},
		{"an unsigned message is refused", signed, body, false},
		{"a changed message is refused", signed, append(sealed[:len(sealed)-1:len(sealed)-1], '0'), false},
		{"a link without keys takes the message of a frame", newSigner("shop", nil), sealed, true},
		{"a link without keys takes an unsigned message", newSigner("shop", nil), body, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.s.open(tc.in)
			if !tc.ok {
				require.ErrorIs(t, err, errUnsigned)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, string(body), string(got))
		})
	}
	t.Run("a payload too long for a message is refused before it is verified", func(t *testing.T) {
		_, err := signed.open([]byte(strings.Repeat("x", maxMessageBytes+frameLen+1)))
		require.ErrorIs(t, err, errMalformed)
	})
}

func TestBucket(t *testing.T) {
	now := time.Now()
	b := bucket{rate: 2, burst: 3, tokens: 3}
	for range 3 {
		require.True(t, b.take(now))
	}
	assert.False(t, b.take(now), "the burst is spent")
	assert.False(t, b.take(now.Add(400*time.Millisecond)), "0.8 token")
	assert.True(t, b.take(now.Add(500*time.Millisecond)), "a token a half second")
	assert.True(t, b.take(now.Add(time.Hour)))
	assert.True(t, b.take(now.Add(time.Hour)))
	assert.True(t, b.take(now.Add(time.Hour)))
	assert.False(t, b.take(now.Add(time.Hour)), "never more than the burst")
}

func TestQuorumCountedByTheReceiver(t *testing.T) {
	l := &Link{cfg: Config{Buffer: 2}, votes: map[string]map[string]time.Time{}}
	q := Quorum{Replicas: 3, Window: time.Second}
	now := time.Now()
	vote := func(name, from string, at time.Duration) bool {
		return l.quorate(word{name: name, from: from}, q, now.Add(at))
	}
	assert.False(t, vote("payments", "a", 0))
	assert.False(t, vote("payments", "a", 10*time.Millisecond), "one sender counts once")
	assert.False(t, vote("payments", "b", 500*time.Millisecond))
	assert.False(t, vote("payments", "c", 1200*time.Millisecond), "a's vote is out of the window")
	assert.True(t, vote("payments", "d", 1300*time.Millisecond))
	assert.Empty(t, l.votes, "the quorum starts over")
	assert.False(t, vote("s1", "a", 0))
	assert.False(t, vote("s2", "a", 0))
	assert.False(t, vote("s3", "a", 0))
	assert.Len(t, l.votes, 2, "at most Buffer suppliers")
}
