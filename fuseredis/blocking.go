package fuseredis

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// blockingNames are the commands that wait on the server by design, for up
// to a timeout of their own (0: for ever). XREAD and XREADGROUP block only
// with a BLOCK argument.
var blockingNames = [...]string{
	"blpop", "brpop", "brpoplpush", "blmove", "blmpop",
	"bzpopmin", "bzpopmax", "bzmpop", "wait", "waitaof",
}

// IsBlocking reports whether cmd is a command that waits on the server by
// design: BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, BZPOPMIN, BZPOPMAX,
// BZMPOP, WAIT, WAITAOF, and XREAD or XREADGROUP with BLOCK. Such a command
// is not admitted through the bulkhead, only through the breaker: see the
// package documentation.
func IsBlocking(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) == 0 {
		return false
	}
	name, ok := args[0].(string)
	if !ok || len(name) < 4 {
		return false
	}
	switch name[0] {
	case 'b', 'B', 'w', 'W':
		for _, b := range blockingNames {
			if strings.EqualFold(name, b) {
				return true
			}
		}
	case 'x', 'X':
		switch {
		case strings.EqualFold(name, "xread"):
			return hasBlock(args[1:], false)
		case strings.EqualFold(name, "xreadgroup"):
			return hasBlock(args[1:], true)
		}
	}
	return false
}

// hasBlock reports whether the options of an XREAD or XREADGROUP (group:
// GROUP is an option), which end where STREAMS begins, hold BLOCK. The
// arguments of an option are skipped: a group, a consumer or a count may
// be named "block" or "streams" and is no option for that.
func hasBlock(args []any, group bool) bool {
	for i := 0; i < len(args); i++ {
		s, ok := args[i].(string)
		if !ok {
			continue // a number: an option's argument
		}
		switch {
		case strings.EqualFold(s, "block"):
			return true
		case strings.EqualFold(s, "streams"):
			return false // keys and ids follow
		case group && strings.EqualFold(s, "group"):
			i += 2 // the group and the consumer
		case strings.EqualFold(s, "count"), group && strings.EqualFold(s, "claim"):
			i++ // the count, the minimum idle time
		}
	}
	return false
}

// blockingCall is a blocking command, or a pipeline that holds one.
type blockingCall struct {
	run     func(ctx context.Context) error // sends it
	verdict func(d doner, err error) error  // its outcome for the breaker
	ping    func(ctx context.Context) error // sends a PING the same way, for a probe
}

// unleased runs a blocking call through the node's breaker alone: admitted
// without a slot while the breaker is closed, its outcome recorded on the
// breaker. A blocking call is never a probe itself, since it could hold the
// probe's place for as long as it blocks: while the breaker is open or
// half-open, the hook sends a PING through the bulkhead on its behalf, which
// is refused until the reset timeout has passed and is then the probe; the
// blocking call goes only once its answer has closed the breaker, and is
// refused otherwise. So a client that sends nothing but blocking commands
// still lets the breaker close.
func (h *Hook) unleased(ctx context.Context, call blockingCall) error {
	if err := h.check(); err != nil {
		return err
	}
	ex, err := h.Group.Executor(h.name)
	if err != nil {
		return err
	}
	b := ex.Breaker()
	if s := b.State(); s == breaker.Open || s == breaker.HalfOpen {
		if err := h.probe(ctx, call.ping); err != nil {
			if shadowed(ex, err) {
				return h.send(func() error { return call.run(&inCall{Context: ctx, h: h}) }) // shadow mode refuses nothing
			}
			return err
		}
	}
	p, err := b.Allow()
	if err != nil {
		if ex.Stats().Shadow {
			return h.send(func() error { return call.run(&inCall{Context: ctx, h: h}) }) // shadow mode refuses nothing
		}
		return h.refuse
	}
	// The permit must end however the call does: one left open would keep
	// a half-open breaker's probe place for ever.
	c := &inCall{Context: ctx, h: h}
	err = h.run(p, func() error { return call.run(c) })
	v := call.verdict(p, err)
	if v != nil && c.Err() != nil {
		// A blocking command waits by design, for as long as its caller
		// lets it: one that the caller's context ended (its deadline, or
		// go-redis's i/o timeout at that deadline, or a cancellation)
		// says nothing of the node.
		p.Ignore()
		return err
	}
	record(ctx, p, v)
	return err
}

// shadowed reports whether a blocking call that err refused must run all
// the same: the executor is in shadow mode, which refuses nothing (its
// own calls, the PING included, ran; the hook's refusal is the one left).
// Stats is read only on this refusal path.
func shadowed(ex *executor.Executor, err error) bool {
	return err != nil && ex.Stats().Shadow
}

// probe sends a PING through the node's executor for a blocking call that
// found the breaker open or half-open. It returns nil once the breaker is
// closed, the executor's refusal while the PING is refused, and the hook's
// refusal when the PING ran and the breaker is still not closed.
func (h *Hook) probe(ctx context.Context, ping func(context.Context) error) error {
	l, err := executor.LeaseIn(ctx, h.Group, h.name)
	if err != nil {
		return err
	}
	err = h.run(l, func() error { return ping(&inCall{Context: ctx, h: h, lease: l.Context()}) })
	v := h.classify(l, err)
	l.Done(v)
	ex, lerr := h.Group.Executor(h.name)
	if lerr != nil {
		return lerr
	}
	if ex.Breaker().State() != breaker.Closed {
		return h.refuse
	}
	return nil
}

// dialFailed records a dial of no command (a pool refill, a pub/sub
// connection) that failed, while the node's breaker is closed: open, it
// needs no more evidence, and half-open, the place belongs to a probe.
//
// Classify gives the verdict on a goroutine of its own (recordDial): the
// dial runs on one of go-redis's (a refill, and in recent versions every
// dial, a command's too), whose work after the dial (its pool's counts,
// handing the error to a command waiting for the connection) a Classify
// ending the goroutine (runtime.Goexit) would cut short, leaving that
// command waiting, slot held, until its caller's context ends. Failed
// dials are rare, each has cost a connection attempt, and none starts a
// goroutine while the breaker is open.
func (h *Hook) dialFailed(ctx context.Context, err error) {
	if h.check() != nil {
		return
	}
	ex, lerr := h.Group.Executor(h.name)
	if lerr != nil {
		return
	}
	b := ex.Breaker()
	if b.State() != breaker.Closed {
		return
	}
	if p, aerr := b.Allow(); aerr == nil {
		// go-redis cancels the dial's context once the dial has returned:
		// whether it was cancelled is read here, not on the goroutine,
		// which would take its own end for a cancellation (record).
		if !errors.Is(ctx.Err(), context.Canceled) {
			ctx = context.WithoutCancel(ctx)
		}
		h.verdicts.Add(1)
		go h.recordDial(ctx, p, err)
	}
}

// recordDial ends the permit p of a dial that failed with err with
// Classify's verdict. A Classify that ends the goroutine ends it all the
// same, a failure naming Classify (abandoned), as for a command.
func (h *Hook) recordDial(ctx context.Context, p breaker.Permit, err error) {
	defer h.verdicts.Done()
	v := h.classify(p, err)
	record(ctx, p, v)
}

// record ends a permit: ignored when the caller cancelled, else with the
// verdict. A breaker classifier that panics has recorded a failure when
// Done panics; the panic is logged, not passed on into go-redis.
func record(ctx context.Context, p breaker.Permit, verdict error) {
	if verdict != nil && errors.Is(ctx.Err(), context.Canceled) {
		p.Ignore()
		return
	}
	_, err := breaker.Guard("breaker", func() (struct{}, error) { p.Done(verdict); return struct{}{}, nil }, nil)
	if err != nil {
		slog.Error("fuseredis: the breaker's classifier panicked; the command counts as a failure", "panic", err)
	}
}
