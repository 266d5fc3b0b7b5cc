package fleet

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// errSilent ends a session whose subscription stopped answering pings.
var errSilent = errors.New("fleet: no answer from Redis")

// errClosing ends a catch-up that Close interrupted.
var errClosing = errors.New("fleet: the link is closing")

// subscribe keeps a session with Redis until Close: connect and subscribe,
// catch up (reassert this replica's open breakers, learn the fleet's), then
// apply messages as they come. A lost session marks the link down and the
// next attempt waits BackoffMin, doubled after every failure up to
// BackoffMax, with jitter.
func (l *Link) subscribe() {
	defer l.wg.Done()
	defer l.alive[goSubscription].Store(false)
	wait := l.cfg.BackoffMin
	for {
		start := time.Now()
		err := l.session()
		if l.stopped() {
			return
		}
		l.setUp(false, err)
		if time.Since(start) > l.cfg.BackoffMax {
			wait = l.cfg.BackoffMin // it was up for a while: start over
		}
		d := wait + time.Duration(rand.Int64N(int64(wait)/2+1))
		wait = min(2*wait, l.cfg.BackoffMax)
		t := time.NewTimer(d)
		select {
		case <-l.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (l *Link) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// session runs one connection until it fails or Close.
func (l *Link) session() error {
	ctx := context.Background()
	subCtx, cancel := context.WithTimeout(ctx, l.cfg.OpTimeout)
	f, err := l.be.subscribe(subCtx)
	cancel()
	if err != nil {
		return err
	}
	l.mu.Lock()
	if l.stopped() {
		l.mu.Unlock()
		_ = f.close()
		return nil
	}
	l.feed = f
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.feed = nil
		l.mu.Unlock()
		_ = f.close()
	}()
	// Subscribed before catching up, so that nothing published in
	// between is missed.
	if err := l.catchUp(); err != nil {
		return err
	}
	l.n.sessions.Add(1)
	l.setUp(true, nil)
	l.viewReset.Store(true)
	select { // the publisher sends what it missed meanwhile
	case l.replay <- struct{}{}:
	default:
	}
	l.rescan.Store(true)
	l.poke("") // wake the scheduler for the rescan

	heard, pinged := time.Now(), false
	var beat time.Time
	for {
		l.heartbeat(&beat)
		p, err := f.receive(ctx, l.cfg.HealthCheck)
		if l.stopped() {
			return nil
		}
		if errors.Is(err, errResync) {
			if err := l.resync(); err != nil {
				return err
			}
			heard, pinged = time.Now(), false
			continue
		}
		if err != nil {
			if !isTimeout(err) {
				return err
			}
			if time.Since(heard) >= 2*l.cfg.HealthCheck && pinged {
				return errSilent
			}
			pctx, cancel := context.WithTimeout(ctx, l.cfg.OpTimeout)
			err = f.ping(pctx)
			cancel()
			if err != nil {
				return err
			}
			pinged = true
			continue
		}
		heard, pinged = time.Now(), false
		if p != nil {
			l.receive(p, time.Now(), 0, 0, nil)
		}
	}
}

// resync catches up with a lane of a cluster that is back, and has the
// publisher send what it missed.
func (l *Link) resync() error {
	if err := l.catchUp(); err != nil {
		return err
	}
	select {
	case l.replay <- struct{}{}:
	default:
	}
	return nil
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// setUp records a change of the link state and logs it.
func (l *Link) setUp(up bool, err error) {
	l.mu.Lock()
	changed := l.up != up
	l.up = up
	if changed {
		l.since = time.Now()
	}
	if err != nil {
		l.lastErr = err.Error()
	}
	l.mu.Unlock()
	first := !up && !changed && l.n.sessions.Load() == 0 && !l.n.warnedNever.Swap(true)
	switch {
	case first:
		l.cfg.Logger.Warn("fusebox: fleet link cannot connect yet; every supplier is protected by this replica's breakers alone",
			"replica", l.cfg.Replica, "prefix", l.cfg.Prefix, "error", errString(err))
	case changed && up:
		l.cfg.Logger.Info("fusebox: fleet link up", "replica", l.cfg.Replica, "prefix", l.cfg.Prefix)
	case changed:
		l.n.downs.Add(1)
		l.rescan.Store(true) // give held breakers their probe times back
		l.poke("")
		l.cfg.Logger.Warn("fusebox: fleet link down; every supplier is protected by this replica's breakers alone",
			"replica", l.cfg.Replica, "prefix", l.cfg.Prefix, "error", errString(err))
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// catchUp runs at the start of a session: this replica's own open breakers
// are written again (Redis may have restarted and forgotten them, or they
// opened while the link was down), then the open keys of the fleet are
// read and applied as messages.
func (l *Link) catchUp() error {
	var mine []breaker.Event
	for _, name := range l.g.Names() {
		ex, ok := l.g.Lookup(name)
		if !ok {
			continue // evicted meanwhile
		}
		s := ex.Breaker().Stats()
		// A supplier whose name cannot go on the wire stays local; its
		// trip was counted when it happened. So does a shadow breaker's
		// verdict (publishable); Stats is read only for an open breaker.
		if s.State == breaker.Open && s.Reason != breaker.Remote && validSupplier(name) && !ex.Stats().Shadow {
			mine = append(mine, breaker.Event{Name: name, From: breaker.Closed, To: breaker.Open,
				Reason: s.Reason, Time: s.Since, OpenUntil: s.OpenUntil, Generation: s.Generation})
		}
	}
	if err := l.reassert(mine); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // Close ends a catch-up in progress
		select {
		case <-l.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	keys, err := l.be.opens(ctx, l.cfg.OpTimeout, l.wanted())
	if err != nil {
		return err
	}
	read := time.Now()
	// The fleet's open keys may outnumber Buffer: wait for the applier
	// (nothing else is received meanwhile) while it makes progress, but
	// once it has taken nothing for OpTimeout (a listener blocks it), no
	// more.
	wait := &patience{op: l.cfg.OpTimeout}
	for _, k := range keys {
		if k.bad != nil {
			l.malformed(k.bad)
			continue
		}
		l.receive(k.payload, read, k.left, 0, wait)
	}
	return l.catchUpOverrides(ctx, wait)
}

// wanted is the catch-up's filter of the names listed in Redis: those this
// replica has an executor for, and Buffer others (which the table of
// remembered trips holds at most); a Strict group wants none it does not
// list.
func (l *Link) wanted() func(string) bool {
	others := 0
	return func(name string) bool {
		if l.has(name) {
			return true
		}
		if _, listed := l.gcfg.Suppliers[name]; l.gcfg.Strict && !listed {
			return false
		}
		others++
		return others <= l.cfg.Buffer
	}
}

// patience is how long a catch-up waits for room in the applier's buffer:
// op for each message, until one wait runs out.
type patience struct {
	op    time.Duration
	spent bool
}

// catchUpSenders is how many of this replica's open breakers the catch-up
// writes at once: the sends share the client's connection pool, so that
// thousands of open breakers take as many round trips divided by this.
const catchUpSenders = 16

// reassert writes this replica's open breakers again at a catch-up,
// catchUpSenders at a time, each send bounded by OpTimeout; one that
// fails is kept for the replay (a lane of a cluster may be down). Close
// waits for the sends in progress only.
func (l *Link) reassert(mine []breaker.Event) error {
	if b, ok := l.be.(batcher); ok && !l.cfg.Quorum.active() {
		return l.reassertAll(b, mine)
	}
	next := make(chan breaker.Event)
	var wg sync.WaitGroup
	for range min(catchUpSenders, len(mine)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range next {
				if l.stopped() || l.send(e) != nil {
					l.miss(e)
				}
			}
		}()
	}
	defer wg.Wait()
	defer close(next)
	for _, e := range mine {
		select {
		case next <- e:
		case <-l.stop:
			return errClosing
		}
	}
	return nil
}

// batcher is a backend that writes many open keys, and publishes their
// messages, in one round trip.
type batcher interface {
	announceAll(ctx context.Context, trips []announcement) error
}

// announcement is one trip for announceAll.
type announcement struct {
	name        string
	stored, msg []byte
	ttl         time.Duration
}

// reassert's batches: catchUpBatch trips a round trip, each round trip
// bounded by OpTimeout; a batch that fails is kept for the replay.
const catchUpBatch = 500

func (l *Link) reassertAll(b batcher, mine []breaker.Event) error {
	for batch := range slices.Chunk(mine, catchUpBatch) {
		if l.stopped() {
			return errClosing
		}
		now := time.Now()
		trips := make([]announcement, len(batch))
		for i, e := range batch {
			m := message{V: wireVersion, Replica: l.cfg.Replica, Supplier: e.Name, Reason: e.Reason.String(), Kind: kindOpen,
				ProbeIn: int64(max(e.OpenUntil.Sub(now), 0)), Age: int64(max(now.Sub(e.Time), 0))}
			stored := m
			ttl := time.Duration(m.ProbeIn) + leaseTTL(l.gcfg, e.Name, l.cfg.Margin) + l.cfg.Margin
			stored.TTL = int64(ttl)
			trips[i] = announcement{name: e.Name, stored: l.seal(stored), msg: l.seal(m), ttl: ttl}
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout)
		err := b.announceAll(ctx, trips)
		cancel()
		if err != nil {
			for _, e := range batch {
				l.miss(e)
			}
		}
	}
	return nil
}

// receive validates one message and hands it to the applier. left is the
// remaining expiry of the key it was read from (0 for a message from the
// channel); limit, for an operator action read from its key, the fleet's
// counter read with it. With the applier's buffer full, it waits as wait
// allows (nil: not at all) and then drops the message.
func (l *Link) receive(p []byte, at time.Time, left time.Duration, limit int64, wait *patience) {
	m, err := l.open(p)
	if err != nil {
		l.malformed(err)
		return
	}
	if m.Replica == l.cfg.Replica && (!isOverride(m.Kind) || l.known(m.Supplier) >= m.Seq) {
		l.n.own.Add(1) // an action of this replica's it knows already
		return
	}
	if left > 0 {
		if m.TTL == 0 {
			l.n.malformed.Add(1)
			return
		}
		m = m.aged(time.Duration(m.TTL) - left)
	}
	l.n.received.Add(1)
	w, clipped := l.translate(m, at)
	w.limit, w.stored = limit, left > 0
	if clipped {
		l.n.clipped.Add(1)
	}
	if l.enqueue(w) {
		return
	}
	if wait == nil || wait.spent {
		l.n.overflow.Add(1)
		return
	}
	t := time.NewTimer(wait.op)
	defer t.Stop()
	select {
	case l.in <- w:
	case <-t.C:
		wait.spent = true
		l.n.overflow.Add(1)
	case <-l.stop:
	}
}

// malformed counts a message or a key refused as invalid, and logs the
// first.
func (l *Link) malformed(err error) {
	if errors.Is(err, errUnsigned) {
		l.n.unsigned.Add(1)
		if l.n.firstUnsigned.CompareAndSwap(false, true) {
			l.cfg.Logger.Warn("fusebox: fleet link dropped a message or key not signed with its keys (further ones are only counted)",
				"replica", l.cfg.Replica)
		}
		return
	}
	l.n.malformed.Add(1)
	if l.n.firstMalformed.CompareAndSwap(false, true) {
		l.cfg.Logger.Warn("fusebox: fleet link dropped a malformed message or key (further ones are only counted)",
			"replica", l.cfg.Replica, "error", err.Error())
	}
}
