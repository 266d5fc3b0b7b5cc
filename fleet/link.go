package fleet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Link connects a Group to the other replicas of its service through
// Redis. It owns four goroutines (the subscription, the applier of the
// fleet's messages, the publisher and the probe-lease scheduler), started
// by New and stopped by Close; none of them is ever on a call's path. It
// is safe for concurrent use.
type Link struct {
	cfg  Config
	gcfg executor.GroupConfig
	g    *executor.Group
	be   backend
	sign signer
	// trips holds the remote trips this replica applies to a rate
	// (Config.TripRate, TripBurst); the applier's own.
	trips bucket
	// votes counts, per supplier, the distinct replicas whose trips
	// arrived within the quorum's window (quorum.go); the applier's own.
	votes map[string]map[string]time.Time
	// live is the number of live replicas the last heartbeat counted,
	// for a quorum by share.
	live atomic.Int64
	// counterMu guards counters, the highest action counter read from
	// Redis per lane (override.go).
	counterMu sync.Mutex
	counters  map[string]int64

	out  chan breaker.Event // local transitions to publish
	wake chan string        // suppliers for the scheduler to look at
	// rescan asks the scheduler to look at every supplier: set when wake
	// was full, and when the link comes up or goes down.
	rescan atomic.Bool

	in chan word // received messages for the applier

	// missed keeps the newest transition per supplier that the publisher
	// could not send (the link was down, or Redis refused it); replay
	// asks the publisher to send those still current once the link is up
	// again (replay.go).
	missedMu sync.Mutex
	missed   map[string]breaker.Event
	replay   chan struct{}

	// pending remembers remote trips of suppliers without an executor
	// here (inbox.go); at most Buffer names.
	pmu     sync.Mutex
	pending map[string]pendingOpen

	// overrides is the newest fleet-wide operator action per supplier
	// (override.go); overriding names the supplier whose breaker the link
	// is overriding, whose transitions are not published.
	omu        sync.Mutex
	overrides  map[string]Override
	waiting    map[string]struct{} // overrides not yet Applied: at most Buffer
	overriding atomic.Pointer[string]

	// written is, per supplier, the breaker generation last reported for
	// the view (view.go); the scheduler's own. viewReset asks it to
	// report everything again.
	written   map[string]uint64
	viewReset atomic.Bool

	stop  chan struct{}
	wg    sync.WaitGroup
	alive [numGoroutines]atomic.Bool // for Close's report
	// applying names the supplier the applier is transitioning (and so
	// running listeners for), for Close's report.
	applying atomic.Pointer[string]

	mu      sync.Mutex
	feed    feed // the current subscription, closed by Close
	up      bool
	since   time.Time
	lastErr string

	n counters
}

type counters struct {
	published, publishFailed, dropped, unsent    atomic.Uint64
	received, applied, stale, malformed, own     atomic.Uint64
	deferred, overflow, clipped, replayed, votes atomic.Uint64
	leasesWon, leasesLost, leaseErrors, renewals atomic.Uint64
	sessions, downs, unpublishable               atomic.Uint64
	unsigned, limited, refused, awaiting         atomic.Uint64
	firstMalformed, warnedNever, firstLocal      atomic.Bool
	firstUnsigned                                atomic.Bool
}

// Stats is a snapshot of a link.
type Stats struct {
	// Replica is this replica's name.
	Replica string
	// Up reports whether the link is connected and subscribed. While it is
	// down every replica protects itself with its own breakers alone.
	Up bool
	// Since is when Up last changed (zero until the first change).
	Since time.Time
	// LastError is the error that last took the link down.
	LastError string
	// Sessions counts successful connections; Downs counts losses.
	Sessions, Downs uint64

	// Published counts transitions sent to the fleet; PublishFailed those
	// Redis refused or did not answer in time; Unsent those skipped while
	// the link was down; Replayed those of the last two kinds sent once
	// the link was up again, because the breaker was still in the state
	// they announced (an opening still open, a closing still closed);
	// Dropped those that found the buffer full.
	Published, PublishFailed, Unsent, Replayed, Dropped uint64
	// Votes counts this replica's trips that stayed local because fewer
	// replicas than the quorum (Config.Quorum) had tripped within its
	// window.
	Votes uint64
	// Unpublishable counts this replica's transitions that stayed local
	// because the supplier's name cannot go on the wire (over
	// MaxSupplierLen bytes, not UTF-8, or with a control character: a
	// supplier made on first use may have any name). Every other replica
	// would drop the message as malformed, so the link does not send it;
	// the supplier is protected by this replica's breaker alone. The first
	// one is logged.
	Unpublishable uint64
	// Received counts messages from other replicas; Applied those that
	// changed a breaker; Stale those the rules set aside (newer local
	// evidence, an operator override, a probe time no later than the
	// breaker's own, a supplier a Strict group does not list, a close of
	// a supplier without an executor); Deferred the trips of suppliers
	// without an executor here, remembered until the group makes one
	// (then counted again as Applied or Stale) or their probe time and a
	// lease have passed; Overflow those dropped because Buffer messages
	// were already waiting to be applied (a transition listener blocking),
	// and operator actions of suppliers without an executor dropped or
	// made room for beyond Buffer;
	// Malformed those refused as invalid (and, at each catch-up, the keys
	// of the fleet's that hold another type); Own this replica's own
	// messages coming back.
	Received, Applied, Stale, Deferred, Overflow, Malformed, Own uint64
	// Clipped counts trips whose probe time lay further ahead than this
	// replica's own breaker would ever wait (its MaxResetTimeout, or
	// ResetTimeout, with jitter) plus a lease and Margin: they were
	// applied with the probe time cut to that bound.
	Clipped uint64
	// Unsigned counts messages and keys dropped because Config.Keys is
	// set and they were not signed with one of the keys (the first is
	// logged). Limited counts remote trips dropped beyond Config.TripRate
	// and TripBurst. Refused counts operator actions numbered above the
	// fleet's counter in Redis, which no operator can have taken.
	// Awaiting counts remote trips held back, under a Quorum, until
	// enough distinct replicas have tripped.
	Unsigned, Limited, Refused, Awaiting uint64
	// LeasesWon, LeasesLost: probe leases contended for; LeaseErrors:
	// contentions that failed (the replica then probes on its own);
	// Renewals: leases a holder extended while its probe was pending.
	LeasesWon, LeasesLost, LeaseErrors, Renewals uint64
}

// New makes the Group of gcfg (see executor.NewGroup) and links it to the
// fleet: every transition of its breakers is observed (gcfg.OnTransition
// and each supplier's Breaker.OnTransition still receive theirs),
// and the link starts connecting in the background. New does not wait for
// Redis: a replica that cannot reach it protects itself alone until it
// can. The Group belongs to the link: Close closes both.
func New(cfg Config, gcfg executor.GroupConfig) (*Link, error) {
	cfg, err := cfg.resolve()
	if err = errors.Join(err, checkGroup(gcfg)); err != nil {
		return nil, err
	}
	var be backend = newRedisBackend(cfg.Client, cfg.Prefix)
	if cc, ok := cfg.Client.(*redis.ClusterClient); ok {
		be = newClusterBackend(cc, cfg.Prefix, cfg.HealthCheck, cfg.BackoffMin)
	}
	return newLink(cfg, gcfg, be)
}

// newLink links a group through any backend; cfg is resolved.
func newLink(cfg Config, gcfg executor.GroupConfig, be backend) (*Link, error) {
	l := &Link{
		cfg: cfg, gcfg: gcfg, be: be, sign: newSigner(cfg.Prefix, cfg.Keys),
		trips:     bucket{rate: cfg.TripRate, burst: float64(cfg.TripBurst), tokens: float64(cfg.TripBurst)},
		votes:     map[string]map[string]time.Time{},
		counters:  map[string]int64{},
		out:       make(chan breaker.Event, cfg.Buffer),
		wake:      make(chan string, cfg.Buffer),
		in:        make(chan word, cfg.Buffer),
		missed:    map[string]breaker.Event{},
		overrides: map[string]Override{},
		waiting:   map[string]struct{}{},
		written:   map[string]uint64{},
		replay:    make(chan struct{}, 1),
		pending:   map[string]pendingOpen{},
		stop:      make(chan struct{}),
	}
	wired := gcfg
	wired.OnTransition = l.observer(gcfg.OnTransition)
	if gcfg.Suppliers != nil {
		wired.Suppliers = maps.Clone(gcfg.Suppliers)
		for name, c := range wired.Suppliers {
			if c.Breaker.OnTransition != nil {
				c.Breaker.OnTransition = l.observer(c.Breaker.OnTransition)
				wired.Suppliers[name] = c
			}
		}
	}
	var err error
	if l.g, err = executor.NewGroup(wired); err != nil {
		return nil, err
	}
	l.wg.Add(numGoroutines)
	for i := range l.alive {
		l.alive[i].Store(true)
	}
	go l.subscribe()
	go l.publish()
	go l.schedule()
	go l.applyLoop()
	return l, nil
}

// made reports whether New made l. A nil Link, or the zero value, has no
// group, no Redis and no goroutines: every method that can return an error
// returns one saying so (see unmade) instead of panicking.
func (l *Link) made() bool { return l != nil && l.stop != nil }

// unmade is the error of method on a Link that New did not make.
func unmade(method string) error {
	return fmt.Errorf("fleet: %s on a nil or zero *Link (make it with fleet.New)", method)
}

// usable returns an error naming method if New did not make l or ctx is
// nil, and nil otherwise.
func (l *Link) usable(ctx context.Context, method string) error {
	switch {
	case !l.made():
		return unmade(method)
	case ctx == nil:
		return fmt.Errorf("fleet: %s with a nil context (use context.Background())", method)
	}
	return nil
}

// Group returns the linked group.
func (l *Link) Group() *executor.Group { return l.g }

// Replica returns this replica's name.
func (l *Link) Replica() string { return l.cfg.Replica }

// Close stops the link (its goroutines end; it sends nothing more) and
// then closes the Group with ctx (see Group.Close). Keys this replica
// wrote expire on their own. If ctx ends first (a transition listener
// blocks the goroutine that applies the fleet's messages), Close closes
// the Group with ctx and returns an error naming the goroutines it
// stopped waiting for; they end when the listener returns. It returns an
// error, and does nothing, on a nil or zero Link or with a nil ctx.
func (l *Link) Close(ctx context.Context) error {
	if err := l.usable(ctx, "Close"); err != nil {
		return err
	}
	select {
	case <-l.stop:
	default:
		close(l.stop)
		l.mu.Lock()
		if l.feed != nil {
			_ = l.feed.close() // unblocks a receive in progress
		}
		l.mu.Unlock()
	}
	stopped := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
		return l.g.Close(ctx)
	case <-ctx.Done():
		select {
		case <-stopped: // both at once: nothing was abandoned
			return l.g.Close(ctx)
		default:
		}
		return errors.Join(l.abandoned(ctx.Err()), l.g.Close(ctx))
	}
}

// abandoned describes the goroutines Close stopped waiting for.
func (l *Link) abandoned(cause error) error {
	var names []string
	for i := range l.alive {
		if l.alive[i].Load() {
			names = append(names, goroutineNames[i])
		}
	}
	where := ""
	if name := l.applying.Load(); name != nil {
		where = fmt.Sprintf(" (the applier is in a transition listener of %q)", *name)
	}
	return fmt.Errorf("fleet: Close gave up waiting for the link's %s goroutine(s)%s: %w; they end when it returns",
		strings.Join(names, ", "), where, cause)
}

// Stats returns a snapshot of the link. Stats has no error to return: for
// a nil or zero Link, which New did not make, LastError says so.
func (l *Link) Stats() Stats {
	if !l.made() {
		return Stats{LastError: unmade("Stats").Error()}
	}
	l.mu.Lock()
	s := Stats{Replica: l.cfg.Replica, Up: l.up, Since: l.since, LastError: l.lastErr}
	l.mu.Unlock()
	n := &l.n
	s.Sessions, s.Downs = n.sessions.Load(), n.downs.Load()
	s.Published, s.PublishFailed, s.Unsent, s.Dropped = n.published.Load(), n.publishFailed.Load(), n.unsent.Load(), n.dropped.Load()
	s.Replayed, s.Votes, s.Unpublishable = n.replayed.Load(), n.votes.Load(), n.unpublishable.Load()
	s.Received, s.Applied, s.Stale, s.Malformed, s.Own = n.received.Load(), n.applied.Load(), n.stale.Load(), n.malformed.Load(), n.own.Load()
	s.Deferred, s.Overflow, s.Clipped = n.deferred.Load(), n.overflow.Load(), n.clipped.Load()
	s.Unsigned, s.Limited, s.Refused, s.Awaiting = n.unsigned.Load(), n.limited.Load(), n.refused.Load(), n.awaiting.Load()
	s.LeasesWon, s.LeasesLost, s.LeaseErrors, s.Renewals = n.leasesWon.Load(), n.leasesLost.Load(), n.leaseErrors.Load(), n.renewals.Load()
	return s
}

// isUp reports the link state.
func (l *Link) isUp() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.up
}

// observer returns the transition listener of the group: a hand-off to
// the link's goroutines that never blocks, then the user's listener (after,
// so that a user listener that panics cannot keep the fleet uninformed). It
// runs inside the Allow or Done of some caller, so all the link does here
// is two non-blocking channel sends.
func (l *Link) observer(user func(breaker.Event)) func(breaker.Event) {
	return func(e breaker.Event) {
		if publishable(e) && !l.isOverriding(e.Name) {
			select {
			case l.out <- e:
			default:
				l.n.dropped.Add(1)
			}
		}
		l.poke(e.Name)
		if user != nil {
			user(e)
		}
	}
}

// publishable reports whether the fleet hears of a transition: openings
// and closings of this replica's own making. Remote ones came from the
// fleet (echoing them would loop); operator overrides (ForcedOpen,
// Disabled) and their end stay local, and so does a shadow breaker's
// verdict (executor.Config.Shadow), which would otherwise open the
// enforcing breakers of the other replicas.
func publishable(e breaker.Event) bool {
	if e.Reason == breaker.Remote || e.Shadow {
		return false
	}
	switch e.To {
	case breaker.Open:
		return true
	case breaker.Closed:
		return e.From == breaker.Open || e.From == breaker.HalfOpen
	}
	return false
}

// isOverriding reports whether the link is applying a fleet-wide operator
// action to name's breaker (on this goroutine or another: either way the
// transition is the fleet's, not this replica's evidence).
func (l *Link) isOverriding(name string) bool {
	p := l.overriding.Load()
	return p != nil && *p == name
}

// poke asks the scheduler to look at a supplier, without blocking.
func (l *Link) poke(name string) {
	select {
	case l.wake <- name:
	default:
		l.rescan.Store(true)
	}
}

// publish sends local transitions until Close.
//
// A transition whose send fails while the link is up is retried with
// backoff (BackoffMin, doubling up to BackoffMax) while it stays current,
// not only at the next session: in a cluster the link stays up while one
// lane's master is lost, and a trip sent after that lane subscribed again
// but before the client found the new master (its slot map refreshed) would
// otherwise wait for a resync that has already happened.
func (l *Link) publish() {
	defer l.wg.Done()
	defer l.alive[goPublisher].Store(false)
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	wait, armed := l.cfg.BackoffMin, false
	again := func() { // after a send that failed while the link was up
		if !armed {
			armed = true
			retry.Reset(wait)
			wait = min(2*wait, l.cfg.BackoffMax)
		}
	}
	for {
		select {
		case <-l.stop:
			return
		case <-l.replay:
			l.replayMissed()
		case <-retry.C:
			armed = false
			if l.replayMissed() && l.isUp() {
				again()
			} else {
				wait = l.cfg.BackoffMin
			}
		case e := <-l.out:
			if !l.wireable(e.Name) {
				continue
			}
			if !l.isUp() {
				l.n.unsent.Add(1)
				l.miss(e) // replayed on reconnect while still current
				continue
			}
			if err := l.send(e); err != nil {
				l.n.publishFailed.Add(1)
				l.miss(e)
				again()
				continue
			}
			l.n.published.Add(1)
		}
	}
}

// wireable reports whether a transition of name can go to the fleet. One
// that cannot (every other replica would refuse the message) is counted in
// Stats.Unpublishable, and the first is logged, rather than sent and
// dropped everywhere unseen.
func (l *Link) wireable(name string) bool {
	why := supplierFault(name)
	if why == "" {
		return true
	}
	l.n.unpublishable.Add(1)
	if l.n.firstLocal.CompareAndSwap(false, true) {
		l.cfg.Logger.Warn("fusebox: fleet link keeps a transition on this replica: the supplier's name cannot go on the wire (further ones are only counted)",
			"replica", l.cfg.Replica, "supplier", name, "why", why)
	}
	return false
}

// seal encodes a message for the wire or a key, signed with Config.Keys.
func (l *Link) seal(m message) []byte { return l.sign.seal(encode(m)) }

// open reads a message from the wire or a key: its signature (with
// Config.Keys), then the message.
func (l *Link) open(p []byte) (message, error) {
	body, err := l.sign.open(p)
	if err != nil {
		return message{}, err
	}
	return decode(body)
}

// send publishes one transition and keeps the open key up to date.
func (l *Link) send(e breaker.Event) error {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout)
	defer cancel()
	now := time.Now()
	m := message{V: wireVersion, Replica: l.cfg.Replica, Supplier: e.Name, Reason: e.Reason.String()}
	evidence := e.Time
	if e.To == breaker.Open {
		m.Kind = kindOpen
		m.ProbeIn = int64(max(e.OpenUntil.Sub(now), 0))
	} else {
		m.Kind = kindClose
		if e.From == breaker.HalfOpen {
			evidence = e.Time.Add(-e.Duration) // the probe's start
		}
	}
	m.Age = int64(max(now.Sub(evidence), 0))
	var err error
	if m.Kind == kindOpen {
		stored := m
		ttl := time.Duration(m.ProbeIn) + leaseTTL(l.gcfg, e.Name, l.cfg.Margin) + l.cfg.Margin
		stored.TTL = int64(ttl)
		if q := l.cfg.Quorum; q.active() {
			var announced bool
			if q.Replicas, err = l.quorum(ctx); err == nil {
				announced, err = l.be.vote(ctx, e.Name, l.cfg.Replica, q, l.seal(stored), ttl, l.seal(m))
			}
			if err == nil && !announced {
				l.n.votes.Add(1)
			}
		} else {
			err = l.be.announce(ctx, e.Name, l.seal(stored), ttl, l.seal(m))
		}
	} else {
		// The key keeps the close for as long as a replica that missed
		// this message may take to read it (closeKept).
		stored := m
		ttl := l.closeKept(e.Name)
		stored.TTL = int64(ttl)
		err = l.be.withdraw(ctx, e.Name, l.seal(stored), ttl, l.seal(m))
	}
	if err == nil && e.From == breaker.HalfOpen {
		// The verdict of this replica's probe is out: free the lease at
		// once, so the next period's contention does not wait for expiry.
		err = l.be.release(ctx, e.Name, l.cfg.Replica)
	}
	return err
}
