package fleet

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/fusebox-go/fusebox/executor"
)

// Defaults for the zero values of Config.
const (
	DefaultBuffer      = 256
	DefaultOpTimeout   = 500 * time.Millisecond
	DefaultMargin      = 100 * time.Millisecond
	DefaultHealthCheck = time.Second
	DefaultBackoffMin  = 50 * time.Millisecond
	DefaultBackoffMax  = 5 * time.Second
	DefaultTripRate    = 10
	DefaultTripBurst   = 100
	MaxPrefixLen       = 64
	MaxReplicaLen      = 64
	MaxSupplierLen     = 256
	maxDurationOnWire  = 100 * 365 * 24 * time.Hour // the longest timeout the breaker accepts
	maxMessageBytes    = 2048
)

// Config links the replicas of one service. Every field but Client and
// Prefix has a documented zero value.
type Config struct {
	// Client talks to Redis: a *redis.Client (redis.NewClient,
	// redis.NewFailoverClient), a *redis.ClusterClient, or anything
	// redis.NewUniversalClient returns. AUTH (Username, Password), TLS
	// (TLSConfig), dial and read timeouts and the connection pool are the
	// client's options. Required. The link does not close it.
	//
	// The client must end every command within OpTimeout: set
	// ContextTimeoutEnabled: true in its options (without it, go-redis
	// ignores the deadline of the link's context on the socket, and a
	// Redis that hangs holds each command for the client's ReadTimeout, 3s
	// by default), or ReadTimeout and WriteTimeout of at most OpTimeout.
	// New refuses a *redis.Client or *redis.ClusterClient that does
	// neither; a client of another type cannot be checked, and must bound
	// its commands the same way.
	Client redis.UniversalClient
	// Prefix namespaces the fleet: every key and the channel of the link
	// start with "{Prefix}:" (the braces keep a fleet's keys in one Redis
	// Cluster slot). Replicas of one service share a prefix; two services
	// that must not trip each other use two. Required, at most 64 bytes.
	Prefix string
	// Replica names this replica in messages and leases. "" means a random
	// 16-hex-digit name. At most 64 bytes.
	Replica string
	// Buffer bounds the local transitions waiting to be published, the
	// suppliers waiting for the lease scheduler, the received messages
	// waiting to be applied, and the suppliers without an executor whose
	// remote trip or operator action the link remembers. A transition that finds the buffer
	// full is dropped and counted (Stats.Dropped): the caller whose call
	// caused it never waits for the link; so is a received message
	// (Stats.Overflow). 0 means 256.
	Buffer int
	// OpTimeout bounds each Redis command of the link. 0 means 500ms.
	OpTimeout time.Duration
	// Margin is how long before a probe is due the replicas contend for
	// the probe lease, and what the lease lasts beyond the invocation
	// timeout. 0 means 100ms.
	Margin time.Duration
	// HealthCheck is how often a quiet subscription is pinged; a link that
	// hears nothing for twice this long is down. 0 means 1s.
	HealthCheck time.Duration
	// BackoffMin and BackoffMax bound the wait between two connection
	// attempts; it doubles from BackoffMin after each failure, with up to
	// 50% jitter. 0 means 50ms and 5s.
	BackoffMin, BackoffMax time.Duration
	// Quorum, with Replicas above 1 or a Share, makes a trip fleet-wide
	// only once that many replicas (or that share of the live ones) have
	// tripped on their own evidence within Window (see Quorum). The zero
	// value: every trip is fleet-wide at once.
	Quorum Quorum
	// Keys, if set, sign every message and key the link writes with
	// Keys[0] (HMAC-SHA256 over the message and the prefix), and make it
	// drop every message and key not signed with one of them, counted in
	// Stats.Unsigned. A rotation lists two: the new key second on every
	// replica, then first, then alone. Each is at least MinKeyLen bytes
	// (32 random bytes recommended). nil: nothing is signed, and any
	// client that can write to the fleet's Redis speaks for the fleet; set
	// keys wherever that Redis is shared with anything else.
	Keys [][]byte
	// TripRate and TripBurst bound how many remote trips this replica
	// applies (a token bucket: TripBurst at once, then TripRate a second);
	// one beyond them is dropped and counted (Stats.Limited), and the
	// replica's own breaker still protects it. Only a trip that opens a
	// breaker takes a token. 0 means 10 a second and a burst of 100.
	TripRate  float64
	TripBurst int
	// Logger receives the link's state changes (up at Info, down at Warn)
	// and the first malformed message. nil means slog.Default().
	Logger *slog.Logger
}

// Quorum asks several replicas to agree before a trip reaches the fleet,
// so that one replica's own trouble (its network, a pause of its process)
// cannot open a supplier for everyone. A replica that trips is protected
// by its own breaker at once, as always; its trip is a vote, kept by Redis
// (a sorted set per supplier, scored by the Redis server's clock), and the
// vote that makes the quorum within Window opens the supplier on every
// replica, as a trip without a quorum does. While the supplier is open
// fleet-wide, a probe's failure reaches the fleet without a vote.
//
// The quorum is Replicas, or with Share ⌈Share × live replicas⌉ if that
// is more. Live replicas are those whose link wrote a heartbeat (one every
// HealthCheck, with Share set) within the last three HealthCheck periods,
// counted just before a trip votes; docs/fleet.md has the mechanism.
type Quorum struct {
	// Replicas is how many replicas must trip, this one included; 0 or 1
	// means no quorum unless Share is set. At most 10000.
	Replicas int
	// Share is the share of the live replicas that must trip, in [0, 1]:
	// 0.5 asks half of them (rounded up). 0 means no share.
	Share float64
	// Window is how recent the votes must be: at least 1ms (Redis keeps
	// the votes in whole milliseconds) and at most 1h. 0 means 10s.
	Window time.Duration
}

// active reports whether a trip must be voted on.
func (q Quorum) active() bool { return q.Replicas > 1 || q.Share > 0 }

// need is the quorum with live replicas: Replicas, or ⌈Share × live⌉ if
// that is more, and at least 1.
func (q Quorum) need(live int) int {
	n := max(q.Replicas, 1)
	if q.Share > 0 {
		// The epsilon keeps 0.3 × 10 at 3 despite binary floating point.
		n = max(n, int(math.Ceil(q.Share*float64(live)-1e-9)))
	}
	return n
}

// DefaultQuorumWindow is the zero value of Quorum.Window.
const DefaultQuorumWindow = 10 * time.Second

// resolve applies the default window; errors name the field.
func (q *Quorum) resolve() []error {
	var errs []error
	if q.Replicas < 0 || q.Replicas > 10000 {
		errs = append(errs, fmt.Errorf("fleet: Config.Quorum.Replicas must be in [0, 10000], got %d", q.Replicas))
	}
	if !(q.Share >= 0 && q.Share <= 1) { // NaN fails both
		errs = append(errs, fmt.Errorf("fleet: Config.Quorum.Share must be in [0, 1], got %v", q.Share))
	}
	switch {
	case q.Window == 0:
		q.Window = DefaultQuorumWindow
	case q.Window < time.Millisecond || q.Window > time.Hour:
		// The vote script counts in whole milliseconds: a shorter window
		// would expire every vote as it is cast, and no quorum would ever
		// be reached.
		errs = append(errs, fmt.Errorf("fleet: Config.Quorum.Window must be 0 (10s) or in [1ms, 1h], got %v", q.Window))
	}
	return errs
}

// resolve applies the defaults and validates; errors name the field.
func (c Config) resolve() (Config, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("fleet: Config."+format, args...))
	}
	if c.Client == nil {
		bad("Client must not be nil")
	}
	switch {
	case c.Prefix == "":
		bad("Prefix must not be empty")
	case len(c.Prefix) > MaxPrefixLen || !printable(c.Prefix):
		bad("Prefix must be at most %d printable bytes without braces, got %q", MaxPrefixLen, c.Prefix)
	}
	if c.Replica == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		c.Replica = hex.EncodeToString(b[:])
	} else if len(c.Replica) > MaxReplicaLen || !printable(c.Replica) {
		bad("Replica must be at most %d printable bytes without braces, got %q", MaxReplicaLen, c.Replica)
	}
	dur := func(name string, v *time.Duration, def time.Duration) {
		switch {
		case *v < 0 || *v > time.Hour:
			bad("%s must be in [0, 1h], got %v", name, *v)
		case *v == 0:
			*v = def
		}
	}
	dur("OpTimeout", &c.OpTimeout, DefaultOpTimeout)
	if c.Client != nil && c.OpTimeout > 0 && c.OpTimeout <= time.Hour {
		if err := checkClient(c.Client, c.OpTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	dur("Margin", &c.Margin, DefaultMargin)
	dur("HealthCheck", &c.HealthCheck, DefaultHealthCheck)
	dur("BackoffMin", &c.BackoffMin, DefaultBackoffMin)
	dur("BackoffMax", &c.BackoffMax, DefaultBackoffMax)
	if c.BackoffMax < c.BackoffMin {
		bad("BackoffMax (%v) must be ≥ BackoffMin (%v)", c.BackoffMax, c.BackoffMin)
	}
	errs = append(errs, c.Quorum.resolve()...)
	switch {
	case c.Buffer < 0 || c.Buffer > 1<<20:
		bad("Buffer must be in [0, %d], got %d", 1<<20, c.Buffer)
	case c.Buffer == 0:
		c.Buffer = DefaultBuffer
	}
	errs = append(errs, checkKeys(c.Keys)...)
	keys := make([][]byte, len(c.Keys)) // the caller's slices may change later
	for i, k := range c.Keys {
		keys[i] = slices.Clone(k)
	}
	c.Keys = keys
	errs = append(errs, c.resolveTrips()...)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, errors.Join(errs...)
}

// resolveTrips applies the defaults of TripRate and TripBurst; errors
// name the field.
func (c *Config) resolveTrips() []error {
	var errs []error
	switch {
	case !(c.TripRate >= 0 && c.TripRate <= 1e6): // NaN fails both
		errs = append(errs, fmt.Errorf("fleet: Config.TripRate must be in [0, 1e6] trips a second, got %v", c.TripRate))
	case c.TripRate == 0:
		c.TripRate = DefaultTripRate
	}
	switch {
	case c.TripBurst < 0 || c.TripBurst > 1e6:
		errs = append(errs, fmt.Errorf("fleet: Config.TripBurst must be in [0, 1e6], got %d", c.TripBurst))
	case c.TripBurst == 0:
		c.TripBurst = DefaultTripBurst
	}
	return errs
}

// checkClient refuses a go-redis client that would not end a command at
// op. go-redis sets a socket deadline from a command's context only with
// ContextTimeoutEnabled; without it the deadline is the client's own
// ReadTimeout and WriteTimeout, and a Redis that accepts commands but
// answers none would hold every command of the link that long.
func checkClient(client redis.UniversalClient, op time.Duration) error {
	var ctxTimeout bool
	var read, write time.Duration
	switch c := client.(type) {
	case *redis.Client: // redis.NewFailoverClient's too
		o := c.Options()
		ctxTimeout, read, write = o.ContextTimeoutEnabled, o.ReadTimeout, o.WriteTimeout
	case *redis.ClusterClient:
		o := c.Options()
		ctxTimeout, read, write = o.ContextTimeoutEnabled, o.ReadTimeout, o.WriteTimeout
	default:
		return nil // it cannot be checked: Config.Client's doc asks for the bound
	}
	// The options are the client's after go-redis applied its defaults: a
	// timeout given as 0 reads 3s, and one given as -1 or -2 (no timeout,
	// no deadline at all) reads 0 or less. With ContextTimeoutEnabled the
	// command's context bounds it, but only where go-redis sets a deadline
	// on the socket at all: not for a timeout below 0 (-2 as given, which a
	// client reads as -1; a cluster client's options keep -2).
	bounded := func(d time.Duration) bool { return d > 0 && d <= op }
	if (ctxTimeout && read >= 0 && write >= 0) || (bounded(read) && bounded(write)) {
		return nil
	}
	show := func(d time.Duration) string {
		if d <= 0 {
			return "none"
		}
		return d.String()
	}
	if ctxTimeout {
		return fmt.Errorf("fleet: Config.Client must end every command within Config.OpTimeout (%v): it sets ContextTimeoutEnabled: true, "+
			"but a ReadTimeout or WriteTimeout of -2 sets no deadline on the socket, so go-redis ignores the link's; use -1 (no timeout of its own) instead", op)
	}
	return fmt.Errorf("fleet: Config.Client must end every command within Config.OpTimeout (%v): set ContextTimeoutEnabled: true in its options "+
		"(without it go-redis ignores the link's deadlines and waits its ReadTimeout on a Redis that does not answer), "+
		"or ReadTimeout and WriteTimeout of at most %v; it has ReadTimeout %s and WriteTimeout %s (go-redis reads 0 as 3s, -1 and -2 as none)",
		op, op, show(read), show(write))
}

// checkGroup refuses group configurations whose breaker names differ from
// the supplier names: the fleet knows a supplier by its executor's name,
// and events carry the breaker's.
func checkGroup(g executor.GroupConfig) error {
	var errs []error
	if g.Default.Breaker.Name != "" {
		errs = append(errs, fmt.Errorf("fleet: GroupConfig.Default.Breaker.Name must be empty (the fleet names suppliers by supplier), got %q", g.Default.Breaker.Name))
	}
	for name, c := range g.Suppliers {
		if c.Breaker.Name != "" && c.Breaker.Name != name {
			errs = append(errs, fmt.Errorf("fleet: GroupConfig.Suppliers[%q].Breaker.Name must be empty or %q, got %q", name, name, c.Breaker.Name))
		}
		if !validSupplier(name) {
			errs = append(errs, fmt.Errorf("fleet: GroupConfig.Suppliers key %q must be 1 to %d bytes of valid UTF-8", name, MaxSupplierLen))
		}
	}
	return errors.Join(errs...)
}

// leaseTTL is how long the probe lease of a supplier lasts: its longest
// call (the invocation timeout, plus the queue wait with a queue) and the
// margin on each side.
func leaseTTL(g executor.GroupConfig, name string, margin time.Duration) time.Duration {
	c := supplierConfig(g, name)
	ttl := c.InvocationTimeout
	if ttl == 0 {
		ttl = time.Second // executor.Config's documented default
	}
	if c.Queue > 0 {
		if c.QueueTimeout > 0 {
			ttl += c.QueueTimeout
		} else {
			ttl *= 2
		}
	}
	return ttl + 2*margin
}

// printable reports whether s is plain printable ASCII without braces
// (which would break the Redis Cluster hash tag).
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' || c == '{' || c == '}' {
			return false
		}
	}
	return true
}

// maxReasonLen bounds a reason on the wire.
const maxReasonLen = 64

// validReplica reports whether s can name a replica (Config.Replica).
func validReplica(s string) bool { return s != "" && len(s) <= MaxReplicaLen && printable(s) }

// validReason reports whether s can be a reason on the wire: an operator's
// words, or a breaker reason.
func validReason(s string) bool {
	return s == "" || (len(s) <= maxReasonLen && validText(s))
}

// validSupplier reports whether s can name a supplier on the wire.
func validSupplier(s string) bool { return supplierFault(s) == "" }

// supplierFault says why s cannot name a supplier on the wire (every
// replica drops a message that names it as malformed), or "" if it can.
func supplierFault(s string) string {
	switch {
	case s == "":
		return "it is empty"
	case len(s) > MaxSupplierLen:
		return fmt.Sprintf("it is %d bytes, at most %d", len(s), MaxSupplierLen)
	case !utf8.ValidString(s):
		return "it is not valid UTF-8"
	case !validText(s):
		return "it has a control character"
	}
	return ""
}

// validText reports whether s is valid UTF-8 without control characters.
func validText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < ' ' || r == 0x7f {
			return false
		}
	}
	return true
}
