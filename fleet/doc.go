// Package fleet links the Groups of the replicas of one service through
// Redis, so that the fleet sheds a hung supplier as soon as one replica sees
// it, and sends the supplier one probe per reset period instead of one per
// replica. No call ever waits for the network: Allow and Submit are exactly
// what they are without a fleet, and everything the link does happens on
// its own goroutines, behind bounded buffers.
//
//	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"},
//		Password: os.Getenv("REDIS_PASSWORD"), TLSConfig: &tls.Config{},
//		ContextTimeoutEnabled: true}) // so that Config.OpTimeout bounds each command
//	link, err := fleet.New(fleet.Config{Client: rdb, Prefix: "shop"}, executor.GroupConfig{
//		Default: executor.Config{Slots: 10, InvocationTimeout: 30 * time.Second,
//			Breaker: breaker.Config{ResetTimeout: 45 * time.Second}},
//	})
//	...
//	defer link.Close(ctx)
//	v, err := executor.DoIn(ctx, link.Group(), "payments", charge)
//
// # What travels
//
// When a breaker of this replica opens (any reason but Remote) the link
// publishes the supplier, the reason, how long ago it opened and how long
// until its probe is due, and writes the same to a key that expires after
// the probe is due plus the probe lease, so that a replica that starts or
// reconnects during the outage learns it. The other replicas' breakers for
// that supplier open at once, with reason breaker.Remote and the same probe
// time. When a breaker closes after being Open or HalfOpen, the link
// publishes that too and writes the close to the key, and the fleet
// closes.
//
// # One probe per reset period
//
// As soon as a linked breaker opens, the link holds it open past its probe
// time (breaker.HoldOpen, a local step). Shortly before the probe is due
// (Config.Margin) each replica contends for a lease: SET
// {prefix}:lease:<supplier> <replica> NX PX <ttl>, ttl being the supplier's
// invocation timeout (plus its queue wait) and twice the margin. The winner
// gives its breaker its probe time back, so its next call is the probe; the
// losers stay held and contend again when the winner's lease runs out (its
// PTTL comes back with the refusal). The winner renews its lease while no
// call has come to start the probe and once more when it starts, and frees
// it when the verdict is published, so a live winner's verdict (closed, or
// open again until the next probe time) reaches the losers first. If the
// winner dies, its lease expires, and one of the losers probes. A link that
// is late to contend delays the probe; it never adds one.
//
// # Which event wins
//
//  1. An operator's override wins: ForcedOpen and Disabled breakers ignore
//     the fleet's trips and closes, and a breaker's own ForceOpen, Disable
//     and Reset are not published. The link's ForceOpen, Disable and Reset
//     act on every replica (see Operator actions).
//  2. Newer evidence wins. A message is applied only if the evidence it
//     carries (when the sender's breaker opened; for a close, when the
//     successful probe started) is newer than the moment the receiving
//     breaker entered its state. A replica that opened, probed or closed on
//     its own calls after the remote event keeps its own verdict, and
//     publishes it; a close never ends an open period of the replica's own
//     making, which its own probe ends. A breaker that has never changed state has no evidence
//     of its own: one made after the trip (on first use, or by a replica
//     that starts during the outage) applies it.
//  3. Remote word never shortens an open period: a trip that reaches an
//     Open breaker moves its probe time to the later of the two. It never
//     lengthens one past this replica's own bound either: a remote probe
//     time further ahead than the supplier's local MaxResetTimeout (or
//     ResetTimeout without back-off), with the largest jitter, plus a
//     probe lease and Config.Margin, is cut to that bound and counted in
//     Stats.Clipped.
//  4. Messages from the link about the link's own doing (reason Remote) are
//     not published again, so nothing echoes.
//
// # Clocks
//
// No wall-clock time crosses the wire. A message carries durations measured
// by the sender's monotonic clock at the moment of sending ("opened 3 ms
// ago, probe due in 44.997 s"); the receiver adds them to its own clock at
// receipt. The error is the one-way latency of the message (sub-millisecond
// on a LAN), whatever the skew between the machines' clocks. A key's age is
// measured by Redis alone: the key holds the expiry it was written with, and
// the reader subtracts the key's remaining PTTL. Events that happen closer
// together than the link's latency are ordered by arrival.
//
// # When Redis is slow or down
//
// Each replica protects itself with its own breakers, exactly as without a
// fleet: a publish that fails is counted, a breaker whose lease cannot be
// contended for, or whose link goes down, gets its probe time back (the
// replica probes on its own), and the subscription
// reconnects with exponential backoff and jitter. On reconnecting the
// replica writes its own open breakers again (Redis may have restarted
// empty), reads the fleet's keys and operator actions, and sends the
// transitions it could not send while the link was down if its breaker is
// still where they left it: a close made during the outage reaches the
// others. A Sentinel failover (redis.NewFailoverClient) is such an outage. Messages are applied on a goroutine of the
// link's own, where the group's listeners hear the Remote transitions: a
// listener that blocks holds that goroutine only (the subscription keeps
// receiving; messages beyond Config.Buffer waiting are dropped and counted),
// and Link.Close returns when its context ends, naming what it abandoned. Stats reports the link state, when it
// changed and why, and every count (NewCollector reports them to
// Prometheus); the logger hears the state changes.
//
// # Trust
//
// Messages are validated (version, known kind, names of bounded length and
// valid UTF-8, durations in range, at most 2 KiB, no unknown fields); a
// malformed one is dropped and counted in Stats.Malformed, never trusted,
// and so is a key of the fleet's that holds another type. A supplier name
// the wire cannot carry never travels: its transitions stay on this
// replica (Stats.Unpublishable).
// Every replica sharing a prefix can open every other's breakers, and so
// can anything that can publish on the fleet's channel: give each fleet its
// own prefix, protect Redis with AUTH and TLS (go-redis options), and set
// Config.Keys (HMAC-SHA256; unsigned messages and keys are dropped,
// Stats.Unsigned) wherever Redis is shared. Whatever the key, one message
// cannot overrule a replica: a remote trip that would open a breaker needs a
// token of Config.TripRate and, under a Quorum, trips of enough distinct
// replicas counted by the receiver; a remote close never ends an open period
// of the replica's own making; an operator action numbered above the
// fleet's counter in Redis is refused (Stats.Refused). The wire never makes an executor: a trip of a supplier this
// replica has no executor for is remembered (the newest per supplier, at
// most Config.Buffer suppliers, each until its key would have expired) and
// applied within 10 ms of the group making the executor on first use; a
// Strict group sets it aside.
//
// # Operator actions, quorum, cluster, view
//
// Link.ForceOpen, Disable and Reset act on one supplier on every replica,
// with the operator's reason: numbered by Redis, stored per supplier (a
// replica that joins later applies them) and published; Link.Control hands
// the dashboard's control to them (dashboard.Options.Control).
// Config.Quorum makes a trip fleet-wide only once several replicas (or a
// share of the live ones) tripped within a window, as each receiver
// counts them. With a *redis.ClusterClient the keys and channel spread
// over 16 lanes, each under its own hash tag with its own (sharded, on
// Redis 7) subscription, so that a lost shard takes only its suppliers'
// link. Link.View and ViewHandler show every replica's state of a supplier
// and who probes next; Link.FleetView shows it on the dashboard's tiles
// (dashboard.Options.FleetView).
package fleet
