package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// wireVersion is the version of the message format; a message of any
// other version is dropped (and counted as malformed).
const wireVersion = 1

// The kinds of message.
const (
	kindOpen  = "open"  // a breaker opened: the others open until the same probe time
	kindClose = "close" // a breaker closed: the others close too
)

// message is what travels on the channel, and what the open key holds.
// Times are durations relative to the sender's clock at sending (or, in
// the key, at writing), never wall-clock instants, so clocks of different
// machines never have to agree.
type message struct {
	V        int    `json:"v"`
	Replica  string `json:"replica"`
	Supplier string `json:"supplier"`
	Kind     string `json:"kind"`
	// Reason is the sender's transition reason, for logs.
	Reason string `json:"reason"`
	// Age is how long before sending the evidence arose: for "open" when
	// the breaker opened, for "close" when the successful probe started.
	Age int64 `json:"age_ns"`
	// ProbeIn is, for "open", how long after sending the probe is due.
	ProbeIn int64 `json:"probe_in_ns,omitempty"`
	// TTL is, in the supplier's key only, the expiry it was written with:
	// a reader learns how old the key is from TTL minus the key's PTTL,
	// which is measured by the Redis server's clock alone.
	TTL int64 `json:"ttl_ns,omitempty"`
	// Seq numbers an operator action (override.go); 0 for the others.
	Seq int64 `json:"seq,omitempty"`
}

// maxSeq bounds an operator action's number: 15 decimal digits, which the
// Lua scripts that store it can check as a string and hold exactly (Redis's
// Lua numbers are doubles, exact below 2^53).
const maxSeq = 999_999_999_999_999

// errMalformed wraps every reason a message is refused.
var errMalformed = errors.New("fleet: malformed message")

func encode(m message) []byte {
	b, _ := json.Marshal(m) // plain fields: cannot fail
	return b
}

// decode parses and validates a message from the wire. Anything unexpected
// is an error: unknown fields, versions and kinds, names too long or not
// UTF-8, durations out of range.
func decode(p []byte) (message, error) {
	var m message
	if len(p) > maxMessageBytes {
		return m, fmt.Errorf("%w: %d bytes, at most %d", errMalformed, len(p), maxMessageBytes)
	}
	if len(p) < 2 || p[0] != '{' || p[len(p)-1] != '}' { // what encode writes, checked before the JSON decoder
		return m, fmt.Errorf("%w: not a JSON object", errMalformed)
	}
	d := json.NewDecoder(bytes.NewReader(p))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		return m, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if d.More() {
		return m, fmt.Errorf("%w: data after the message", errMalformed)
	}
	bad := func(format string, args ...any) (message, error) {
		return message{}, fmt.Errorf("%w: "+format, append([]any{errMalformed}, args...)...)
	}
	inRange := func(v int64) bool { return v >= 0 && v <= int64(maxDurationOnWire) }
	switch {
	case m.V != wireVersion:
		return bad("version %d, want %d", m.V, wireVersion)
	case m.Replica == "" || len(m.Replica) > MaxReplicaLen || !printable(m.Replica):
		return bad("replica %q", m.Replica)
	case !validSupplier(m.Supplier):
		return bad("supplier %q", m.Supplier)
	case checkKind(m) != "":
		return bad("%s", checkKind(m))
	case !validReason(m.Reason):
		return bad("reason %q", m.Reason)
	case !inRange(m.Age) || !inRange(m.ProbeIn) || !inRange(m.TTL):
		return bad("durations out of range: age %d, probe_in %d, ttl %d", m.Age, m.ProbeIn, m.TTL)
	case m.Kind == kindClose && m.ProbeIn != 0:
		return bad("a close message has no probe time")
	case m.Seq < 0 || m.Seq > maxSeq:
		return bad("seq %d out of range [0, %d]", m.Seq, maxSeq)
	}
	return m, nil
}

// aged returns the message as it reads d after it was written: older by
// d, and its probe that much closer (never before now).
func (m message) aged(d time.Duration) message {
	if d <= 0 {
		return m
	}
	m.Age = min(m.Age+int64(d), int64(maxDurationOnWire))
	m.ProbeIn = max(m.ProbeIn-int64(d), 0)
	return m
}

// checkKind returns what is wrong with a message's kind and the fields
// that go with it, or "".
func checkKind(m message) string {
	switch {
	case m.Kind != kindOpen && m.Kind != kindClose && !isOverride(m.Kind):
		return fmt.Sprintf("kind %q", m.Kind)
	case isOverride(m.Kind) != (m.Seq > 0):
		return fmt.Sprintf("seq %d for kind %q", m.Seq, m.Kind)
	case isOverride(m.Kind) && (m.ProbeIn != 0 || m.TTL != 0):
		return "an operator action has no probe time"
	}
	return ""
}
