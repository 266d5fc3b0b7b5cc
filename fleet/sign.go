package fleet

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// Signed messages (Config.Keys). With keys, everything the link publishes
// and every key it writes is a frame: "fb1." + the base64url HMAC-SHA256
// of "{Prefix}\n" + the message + "." + the message. The prefix is inside
// the MAC, so that a fleet sharing a key with another cannot be fed its
// messages. A receiver with keys accepts a frame signed with any of them
// (two during a rotation) and drops everything else, counted in
// Stats.Unsigned; one without keys takes a frame's message unverified, so
// that a fleet can turn keys on replica by replica.

const (
	signTag  = "fb1."
	macLen   = 43 // base64url without padding of a SHA-256 MAC
	frameLen = len(signTag) + macLen + 1
	// MaxKeys is how many keys Config.Keys may hold: the one that signs
	// and the one it replaces.
	MaxKeys = 2
	// MinKeyLen is the shortest key Config.Keys accepts.
	MinKeyLen = 16
)

// errUnsigned is a message or key that a link with keys refuses.
var errUnsigned = errors.New("fleet: unsigned or badly signed message")

// signer frames messages for one fleet.
type signer struct {
	prefix []byte
	keys   [][]byte
}

func newSigner(prefix string, keys [][]byte) signer {
	return signer{prefix: []byte("{" + prefix + "}\n"), keys: keys}
}

func (s signer) mac(key, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(s.prefix)
	h.Write(body)
	return h.Sum(nil)
}

// seal frames body; without keys it is body itself.
func (s signer) seal(body []byte) []byte {
	if len(s.keys) == 0 {
		return body
	}
	out := make([]byte, 0, frameLen+len(body))
	out = append(out, signTag...)
	out = base64.RawURLEncoding.AppendEncode(out, s.mac(s.keys[0], body))
	out = append(out, '.')
	return append(out, body...)
}

// open returns the message a frame carries. A payload too long to be a
// message is refused before anything else looks at it.
func (s signer) open(p []byte) ([]byte, error) {
	if len(p) > maxMessageBytes+frameLen {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", errMalformed, len(p), maxMessageBytes+frameLen)
	}
	framed := len(p) >= frameLen && bytes.HasPrefix(p, []byte(signTag)) && p[frameLen-1] == '.'
	if len(s.keys) == 0 {
		if framed {
			return p[frameLen:], nil
		}
		return p, nil
	}
	if !framed {
		return nil, errUnsigned
	}
	var got [sha256.Size]byte
	if n, err := base64.RawURLEncoding.Decode(got[:], p[len(signTag):frameLen-1]); err != nil || n != len(got) {
		return nil, errUnsigned
	}
	body := p[frameLen:]
	for _, k := range s.keys {
		if hmac.Equal(got[:], s.mac(k, body)) {
			return body, nil
		}
	}
	return nil, errUnsigned
}

// checkKeys validates Config.Keys; errors name the field.
func checkKeys(keys [][]byte) []error {
	var errs []error
	if len(keys) > MaxKeys {
		errs = append(errs, fmt.Errorf("fleet: Config.Keys must hold at most %d keys (the one that signs and the one it replaces), got %d", MaxKeys, len(keys)))
	}
	for i, k := range keys {
		if len(k) < MinKeyLen {
			errs = append(errs, fmt.Errorf("fleet: Config.Keys[%d] must be at least %d bytes (32 random bytes recommended), got %d", i, MinKeyLen, len(k)))
		}
	}
	return errs
}
