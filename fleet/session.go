package fleet

import (
	"context"
	"errors"
	"math/rand/v2"
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
			l.receive(p, time.Now(), 0, nil)
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
		// trip was counted when it happened.
		if s.State == breaker.Open && s.Reason != breaker.Remote && validSupplier(name) {
			mine = append(mine, breaker.Event{Name: name, From: breaker.Closed, To: breaker.Open,
				Reason: s.Reason, Time: s.Since, OpenUntil: s.OpenUntil, Generation: s.Generation})
		}
	}
	for _, e := range mine {
		// Each send may wait OpTimeout on a Redis that does not answer:
		// Close waits for the one in progress, not for every open supplier.
		if l.stopped() {
			return errClosing
		}
		if err := l.send(e); err != nil {
			l.miss(e) // a lane of a cluster may be down: replayed later
		}
	}
	if l.stopped() {
		return errClosing
	}

	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout)
	defer cancel()
	keys, err := l.be.opens(ctx)
	if err != nil {
		return err
	}
	read := time.Now()
	// The fleet's open keys may outnumber Buffer: wait for the applier
	// (nothing else is received meanwhile), but no longer than OpTimeout
	// in all, in case a listener blocks it.
	wctx, wcancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout)
	defer wcancel()
	for _, k := range keys {
		if k.bad != nil {
			l.malformed(k.bad)
			continue
		}
		l.receive(k.payload, read, k.left, wctx.Done())
	}
	return l.catchUpOverrides(ctx, wctx.Done())
}

// receive validates one message and hands it to the applier. left is the
// remaining expiry of the key it was read from (0 for a message from the
// channel). With the applier's buffer full, it waits until wait is closed
// (nil: it does not wait) and then drops the message.
func (l *Link) receive(p []byte, at time.Time, left time.Duration, wait <-chan struct{}) {
	m, err := decode(p)
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
	if clipped {
		l.n.clipped.Add(1)
	}
	if l.enqueue(w) {
		return
	}
	if wait == nil {
		l.n.overflow.Add(1)
		return
	}
	select {
	case l.in <- w:
	case <-wait:
		l.n.overflow.Add(1)
	case <-l.stop:
	}
}

// malformed counts a message or a key refused as invalid, and logs the
// first.
func (l *Link) malformed(err error) {
	l.n.malformed.Add(1)
	if l.n.firstMalformed.CompareAndSwap(false, true) {
		l.cfg.Logger.Warn("fusebox: fleet link dropped a malformed message or key (further ones are only counted)",
			"replica", l.cfg.Replica, "error", err.Error())
	}
}
