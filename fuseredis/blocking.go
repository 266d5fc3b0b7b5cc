package fuseredis

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/fusebox-go/fusebox/breaker"
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
		if strings.EqualFold(name, "xread") || strings.EqualFold(name, "xreadgroup") {
			return hasBlock(args[1:])
		}
	}
	return false
}

// hasBlock reports whether the options of an XREAD or XREADGROUP, which
// end where STREAMS begins, hold BLOCK.
func hasBlock(args []any) bool {
	for _, a := range args {
		if s, ok := a.(string); ok {
			if strings.EqualFold(s, "block") {
				return true
			}
			if strings.EqualFold(s, "streams") {
				return false // keys and ids follow
			}
		}
	}
	return false
}

// unleased runs a blocking command, or a pipeline that holds one, through
// the node's breaker alone: refused while the breaker is open or half-open
// (a blocking command is never a probe: it could hold the probe's place
// for as long as it blocks), admitted without a slot otherwise, and its
// outcome recorded on the breaker.
func (h *Hook) unleased(ctx context.Context, run func(context.Context) error, verdict func(error) error) error {
	h.init()
	if h.bad != nil {
		return h.bad
	}
	ex, err := h.Group.Executor(h.name)
	if err != nil {
		return err
	}
	b := ex.Breaker()
	if s := b.State(); s == breaker.Open || s == breaker.HalfOpen {
		return h.refuse
	}
	p, err := b.Allow()
	if err != nil {
		return h.refuse
	}
	err = run(&inCall{ctx, h, nil})
	record(ctx, p, verdict(err))
	return err
}

// dialFailed records a dial of no command (a pool refill, a pub/sub
// connection) that failed, while the node's breaker is closed: open, it
// needs no more evidence, and half-open, the place belongs to a probe.
func (h *Hook) dialFailed(ctx context.Context, err error) {
	h.init()
	if h.bad != nil {
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
		record(ctx, p, h.classify(err))
	}
}

// record ends a permit: ignored when the caller cancelled, else with the
// verdict. A breaker classifier that panics has recorded a failure when
// Done panics; the panic is logged, not passed on into go-redis.
func record(ctx context.Context, p breaker.Permit, verdict error) {
	if verdict != nil && errors.Is(ctx.Err(), context.Canceled) {
		p.Ignore()
		return
	}
	defer func() {
		if v := recover(); v != nil {
			slog.Error("fuseredis: the breaker's classifier panicked; the command counts as a failure", "panic", v)
		}
	}()
	p.Done(verdict)
}
