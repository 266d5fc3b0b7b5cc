package fuseredis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Hook is a go-redis hook that runs the commands and pipelines of one
// Redis node through the executor an executor.Group keeps for that node:
// one bulkhead and breaker per node address, so that one stuck node of a
// cluster trips alone. Add one to each node's client:
//
//	rdb.AddHook(fuseredis.New(g, rdb.Options().Addr))
//
// The fields are read once, by the hook's first command or dial; set them
// before the client is used. A Hook is safe for concurrent use; give each
// node's client a Hook of its own. A nil *Hook fails every command with an
// error saying so.
type Hook struct {
	// Group supplies the node's executor; its GroupConfig sets the slots,
	// timeouts and breaker rules (per-node settings under the supplier's
	// name). Required.
	Group *executor.Group

	// Addr is the node's address ("10.0.0.7:6379"), as the client's
	// Options.Addr has it. It names the supplier unless Supplier is set.
	// Required.
	Addr string

	// Supplier names the node's executor in Group. "" means Addr.
	Supplier string

	// Classify turns the error of a command (every command of a pipeline,
	// one by one) into the error its breaker records: nil counts as a
	// success, an error matching context.Canceled as ignored (with the
	// breaker's default classifier), anything else as a failure. It never
	// changes what the caller receives. nil means DefaultClassify. A
	// Classify that panics is logged, and the command counts as a failure;
	// one that ends its goroutine (runtime.Goexit) gives the command's slot
	// back, counted as a failure, before the Goexit goes on. For a failed
	// dial of no command it runs on a goroutine of its own, which its
	// Goexit ends alone, the dial counted as a failure all the same.
	Classify func(err error) error

	once   sync.Once
	name   string
	bad    error                   // a configuration error, returned by every command
	refuse *executor.RejectedError // a blocking command's refusal: the breaker is open
	// sending counts the commands (pipelines, PINGs) of the hook being
	// sent (send), and failedAt is when the last one that failed ended,
	// in ns since the Unix epoch: a dial that fails meanwhile, or within
	// dialAfterglow of such an end, is taken for one of theirs (DialHook).
	sending  atomic.Int64
	failedAt atomic.Int64
	// verdicts counts the verdicts of failed dials still being reached
	// (recordDial), for the tests to wait for.
	verdicts sync.WaitGroup
}

// dialAfterglow is how long after a command that failed a failed dial is
// still taken for that command's: go-redis goes on retrying a command's
// dial after the command has given up (its caller's deadline, the
// invocation timeout), 5 tries 100 ms apart by default.
const dialAfterglow = time.Second

// send sends a command (pipeline, PING) of h with f, counted in h.sending
// while it runs. go-redis v9.15 and later dial a command's connection on
// a goroutine of their own, with a context of their own that inCall's mark
// does not reach, and retry a failed dial up to DialerRetries (5) times:
// counted one by one, a single command's dials to a node that refuses
// them would open its breaker at the default threshold of 5. A dial that
// fails while a command of the node is being sent is therefore taken for
// that command's, which counts once, as its error; so is one that fails
// within dialAfterglow of the end of a command that failed, since go-redis
// retries the dial of a command that has given up. A command that
// succeeds writes nothing beyond the count.
func (h *Hook) send(f func() error) error {
	h.sending.Add(1)
	defer h.sending.Add(-1)
	err := f()
	if err != nil {
		h.failedAt.Store(time.Now().UnixNano())
	}
	return err
}

// commandsDial reports whether a dial that failed now is taken for a
// command's (see send).
func (h *Hook) commandsDial() bool {
	return h.sending.Load() > 0 || time.Now().UnixNano()-h.failedAt.Load() < int64(dialAfterglow)
}

// New returns the Hook of the node at addr, on the executor of that name in
// g.
func New(g *executor.Group, addr string) *Hook {
	return &Hook{Group: g, Addr: addr}
}

// inCall is the context a protected command runs with: the caller's
// (values, cancellation), with the lease's deadline, the earlier of the
// caller's and the invocation deadline, and a mark that tells the hook's
// own dial and process hooks that they run on behalf of this command (the
// connection set-up go-redis does inside a command: a dial, HELLO, AUTH,
// CLIENT SETINFO), which the command's slot and verdict already cover.
//
// The deadline reaches go-redis through Deadline: with
// Options.ContextTimeoutEnabled it is the socket's deadline, so a command
// on a hung node ends at the invocation timeout. Err reports the deadline
// once it has passed. Done is the caller's channel the first time it is
// asked for and the lease's from then on (see Done).
type inCall struct {
	context.Context
	h     *Hook
	lease context.Context // nil for a blocking command: the caller's deadline
	asked atomic.Bool     // Done has been asked for
}

// Done returns the caller's channel the first time and the lease's, which
// also closes at the invocation deadline, after. go-redis first asks for
// Done on every command only to check, without waiting, that the context
// has not ended, and the lease's channel costs an allocation and a lock.
// It asks again only to wait: for a pool connection, for a dial, or in
// the back-off before a retry, which must all end at the deadline.
func (c *inCall) Done() <-chan struct{} {
	if c.lease == nil || !c.asked.Swap(true) {
		return c.Context.Done()
	}
	return c.lease.Done()
}

func (c *inCall) Deadline() (time.Time, bool) {
	if c.lease != nil {
		return c.lease.Deadline()
	}
	return c.Context.Deadline()
}

func (c *inCall) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if d, ok := c.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

type markKey struct{}

func (c *inCall) Value(key any) any {
	if key == (markKey{}) {
		return c.h
	}
	return c.Context.Value(key)
}

// within reports whether ctx is that of a command of h in progress. A nil
// Hook runs no command (check refuses them all), so an unmarked ctx, whose
// mark reads as a nil *Hook, is never within one.
func (h *Hook) within(ctx context.Context) bool {
	v, _ := ctx.Value(markKey{}).(*Hook)
	return h != nil && v == h
}

// errNilHook fails every command of a nil *Hook: added to a client, it
// would otherwise pass every command on unprotected.
var errNilHook = errors.New("fuseredis: a nil *Hook (make it with fuseredis.New)")

// check returns the error that fails every command of h, nil if none: a
// nil Hook, or a configuration error.
func (h *Hook) check() error {
	if h == nil {
		return errNilHook
	}
	h.init()
	return h.bad
}

func (h *Hook) init() {
	h.once.Do(func() {
		switch {
		case h.Group == nil:
			h.bad = errors.New("fuseredis: Hook.Group is nil")
		case h.Supplier != "" && strings.TrimSpace(h.Supplier) == "":
			h.bad = fmt.Errorf("fuseredis: Hook.Supplier %q is blank: leave it empty for Addr or name the node's executor", h.Supplier)
		case h.Addr != "" && strings.TrimSpace(h.Addr) == "":
			h.bad = fmt.Errorf("fuseredis: Hook.Addr %q is blank: set it to the node's address (the client's Options.Addr)", h.Addr)
		case h.Addr == "" && h.Supplier == "":
			h.bad = errors.New("fuseredis: Hook.Addr is empty: set it to the node's address (the client's Options.Addr)")
		}
		h.name = h.Supplier
		if h.name == "" {
			h.name = h.Addr
		}
		h.refuse = &executor.RejectedError{Supplier: h.name, Reason: executor.RejectedOpen}
	})
}

// DialHook counts the failed dials that no command of the hook waits for
// (the pool's own refills, pub/sub connections) as failures of the node,
// while its breaker is closed. A dial a command makes is part of that
// command, and its failure is the command's error: counted once, there.
func (h *Hook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil && !h.within(ctx) && (h == nil || !h.commandsDial()) {
			h.dialFailed(ctx, err) // no command's (see send)
		}
		return conn, err
	}
}

// ProcessHook runs every command through the node's executor: a command
// holds one slot while it runs, and is refused at once, without being sent,
// when the breaker is open or the bulkhead stuck. A blocking command
// (IsBlocking) holds no slot; see the package documentation.
func (h *Hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.within(ctx) {
			return next(ctx, cmd)
		}
		if IsBlocking(cmd) {
			return h.unleased(ctx, blockingCall{
				run:     func(ctx context.Context) error { return next(ctx, cmd) },
				verdict: h.classify,
				ping:    func(ctx context.Context) error { return next(ctx, redis.NewStatusCmd(ctx, "ping")) },
			})
		}
		l, err := h.lease(ctx)
		if err != nil {
			return err // go-redis sets it on cmd
		}
		err = h.run(l, func() error { return next(&inCall{Context: ctx, h: h, lease: l.Context()}, cmd) })
		v := h.classify(l, err)
		if err != nil {
			err = timedOut(ctx, l, err) // before Done, while the lease is the call's
		}
		l.Done(v)
		return err // go-redis sets it on cmd
	}
}

// ProcessPipelineHook runs a pipeline (or a MULTI/EXEC transaction) as one
// call: it holds one slot until its last reply is read, and its verdict is
// that of its first command whose error is not a success. A refused
// pipeline sends nothing; every command of it carries the refusal. A
// pipeline that holds a blocking command is blocking as a whole.
func (h *Hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.within(ctx) {
			return next(ctx, cmds)
		}
		for _, cmd := range cmds {
			if IsBlocking(cmd) {
				sent := false
				err := h.unleased(ctx, blockingCall{
					run: func(ctx context.Context) error {
						sent = true
						return next(ctx, cmds)
					},
					verdict: func(d doner, err error) error { return h.verdict(d, cmds, err) },
					ping: func(ctx context.Context) error {
						return next(ctx, []redis.Cmder{redis.NewStatusCmd(ctx, "ping")})
					},
				})
				if !sent {
					setAll(cmds, err) // refused: nothing was sent
				}
				return err
			}
		}
		l, err := h.lease(ctx)
		if err != nil {
			return setAll(cmds, err)
		}
		err = h.run(l, func() error { return next(&inCall{Context: ctx, h: h, lease: l.Context()}, cmds) })
		v := h.verdict(l, cmds, err)
		if err != nil {
			if werr := timedOut(ctx, l, err); werr != err {
				// Exec returns the hook's error, and the commands keep
				// their own: go-redis sets the i/o timeout on those that
				// got no reply, or (when it would retry and may not) on
				// none. Each that has the timeout or no result has it
				// wrapped, as go-redis does when it sets them.
				for _, cmd := range cmds {
					if cerr := cmd.Err(); cerr == nil {
						cmd.SetErr(werr)
					} else if w := timedOut(ctx, l, cerr); w != cerr {
						cmd.SetErr(w)
					}
				}
				err = werr
			}
		}
		l.Done(v)
		return err
	}
}

// doner is what a command that did not return ends: an *executor.Lease,
// or a blocking command's breaker.Permit.
type doner interface{ Done(error) }

// run sends a command (or pipeline) of go-redis's, f, under
// executor.Guard. If f panics or ends the goroutine (runtime.Goexit), d
// ends as a failure first (the slot is given back), and the panic goes on
// up to whoever recovers it (an http.Server does), as without the hook; a
// Goexit cannot be stopped either.
func (h *Hook) run(d doner, f func() error) error {
	_, err := breaker.Guard(commandCallback, func() (struct{}, error) { return struct{}{}, h.send(f) }, d.Done)
	if pe, ok := err.(*breaker.PanicError); ok && pe.Callback == commandCallback {
		d.Done(pe)
		panic(pe.Value)
	}
	return err
}

const commandCallback = "redis command"

// timedOut is the error the caller gets for a command (or pipeline) of
// lease l that failed with err: err wrapped in executor.ErrTimeout when the
// executor's invocation deadline ended it, not the caller's own context,
// and err itself otherwise. A deadline ended it when err is a deadline
// (go-redis's i/o timeout on the socket, or context.DeadlineExceeded from
// inCall.Err) and the lease's deadline, earlier than any of the caller's,
// has passed: the socket's deadline is the lease's, which passes by the
// clock, whatever the executor's timeline has done yet. Replies of the
// server (redis.Nil among them) are never deadlines and stay as they are.
func timedOut(ctx context.Context, l *executor.Lease, err error) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, executor.ErrTimeout) || ctx.Err() != nil {
		return err
	}
	d, _ := l.Context().Deadline()
	if cd, ok := ctx.Deadline(); ok && !cd.After(d) {
		return err // the caller's own deadline
	}
	if time.Now().Before(d) {
		return err // a timeout of go-redis's own (ReadTimeout, WriteTimeout)
	}
	return fmt.Errorf("%w: %w", executor.ErrTimeout, err)
}

// lease takes a slot of the node's executor, or returns why not.
func (h *Hook) lease(ctx context.Context) (*executor.Lease, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	return executor.LeaseIn(ctx, h.Group, h.name)
}

// verdict is the outcome of a pipeline: that of its first command that
// did not succeed, else that of the pipeline's own error.
func (h *Hook) verdict(d doner, cmds []redis.Cmder, err error) error {
	for _, cmd := range cmds {
		if v := h.classify(d, cmd.Err()); v != nil {
			return v
		}
	}
	return h.classify(d, err)
}

// setAll gives every command of a refused pipeline the refusal.
func setAll(cmds []redis.Cmder, err error) error {
	if err != nil {
		for _, cmd := range cmds {
			if cmd.Err() == nil {
				cmd.SetErr(err)
			}
		}
	}
	return err
}

// classify applies Classify under executor.Guard. A classifier that
// panics makes the command a failure, recorded as a *breaker.PanicError
// naming it, and is logged with its stack; one that ends the goroutine
// (runtime.Goexit) ends d the same way first.
func (h *Hook) classify(d doner, err error) error {
	if err == nil {
		return nil
	}
	c := h.Classify
	if c == nil {
		return DefaultClassify(err)
	}
	v, perr := breaker.Guard("fuseredis.Hook.Classify", func() (error, error) { return c(err), nil }, d.Done)
	if pe, ok := perr.(*breaker.PanicError); ok {
		slog.Error("fuseredis: Hook.Classify panicked; the command counts as a failure",
			"error", err, "panic", pe.Value, "stack", string(pe.Stack))
		return pe
	}
	return v
}
