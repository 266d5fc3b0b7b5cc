package fusepgx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fusebox-go/fusebox/executor"
)

// Begin starts a transaction with the default options (BeginTx).
func (p *Pool) Begin(ctx context.Context) (pgx.Tx, error) {
	return p.BeginTx(ctx, pgx.TxOptions{})
}

// BeginTx starts a transaction under a slot of the supplier of ctx, held
// until Commit or Rollback returns. The transaction runs under ctx: its
// end, or the supplier's invocation timeout, ends the transaction. Its
// statements run under the slot, each with its own context bounded by the
// transaction's deadline; once that has passed, the next call rolls the
// transaction back (closing its connection) and gives the slot back.
func (p *Pool) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	cl, err := p.start(ctx, "")
	if err != nil {
		return nil, err
	}
	t, err := inPgx("pgx", func() (pgx.Tx, error) { return cl.c.BeginTx(cl.dctx, opts) }, cl.abandon)
	if err != nil {
		return nil, p.s.finish(&cl, err)
	}
	return &tx{t: t, cl: cl, s: p.s}, nil
}

// tx is an open transaction and the slot it holds; a savepoint (Begin on a
// transaction) is a tx whose root is the transaction's. A pgx.Tx is not
// safe for concurrent use, so its fields need no lock.
type tx struct {
	t     pgx.Tx
	cl    call // the transaction's; for a savepoint, unused
	s     *shared
	root  *tx // nil for the transaction itself
	ended bool
}

func (t *tx) top() *tx {
	if t.root != nil {
		return t.root
	}
	return t
}

// endedCtx is a context that has ended, for a Rollback that must send
// nothing.
var endedCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// errTxDeadline is returned by the transaction's calls after its invocation
// deadline has passed (or the executor's Close gave up on it); it matches
// executor.ErrTimeout and pgx.ErrTxClosed.
var errTxDeadline = fmt.Errorf("fusepgx: the transaction's invocation deadline has passed and it was rolled back: %w: %w",
	executor.ErrTimeout, pgx.ErrTxClosed)

// context is the context of a statement in the transaction: ctx, ended at
// the latest by the transaction's deadline; ctx itself when it is sure to
// end by then (endsBy). Once the transaction's slot has ended (its
// deadline, its Begin context's end, the executor's Close) the
// transaction is rolled back and context returns an error.
func (t *tx) context(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if ctx == nil {
		return nil, nil, errors.New("fusepgx: a nil context (use context.Background())")
	}
	r := t.top()
	if r.ended {
		return nil, nil, pgx.ErrTxClosed
	}
	lctx := r.cl.l.Context()
	d, _ := lctx.Deadline() // a lease's context always has one
	// By the clock too: a statement bounded by d may return before the
	// executor's timer has ended the lease's context.
	if lctx.Err() != nil || !time.Now().Before(d) {
		r.abort()
		if err := r.cl.ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("fusepgx: the transaction's Begin context has ended and it was rolled back: %w: %w", err, pgx.ErrTxClosed)
		}
		return nil, nil, errTxDeadline
	}
	if endsBy(ctx, d) {
		return ctx, func() {}, nil
	}
	c, cancel := context.WithDeadline(ctx, d)
	return c, cancel, nil
}

// callerErr is the error the caller of a statement in the transaction gets
// for pgx's err: wrapped in executor.ErrTimeout when the transaction's
// deadline, not ctx, ended it.
func (t *tx) callerErr(ctx context.Context, err error) error {
	r := t.top()
	if err == nil || r.ended {
		return err
	}
	return r.s.callerErr(ctx, r.cl.l, err)
}

// abort ends a transaction whose slot's context has ended (or whose
// deadline has passed): pgx's Rollback with an ended context sends nothing
// and closes the connection (the server rolls back), then the slot is
// given back. No Classify judges it: the executor records the lease's end
// as its caller's cancellation or, past the deadline, as the timeout (if
// its timer has not already).
func (t *tx) abort() {
	t.ended = true
	_, _ = inPgx("pgx", func() (struct{}, error) { return struct{}{}, t.t.Rollback(endedCtx) }, t.cl.abandon)
	t.cl.abandon(errTxDeadline)
}

// end ends the transaction with Commit or Rollback (op) and gives the slot
// back with its error's verdict.
func (t *tx) end(ctx context.Context, op func(pgx.Tx, context.Context) error) error {
	if t.root != nil { // a savepoint: the transaction goes on
		sctx, cancel, err := t.context(ctx)
		if err != nil {
			return err
		}
		defer cancel()
		return t.callerErr(ctx, op(t.t, sctx))
	}
	sctx, cancel, err := t.context(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	t.ended = true
	_, err = inPgx("pgx", func() (struct{}, error) { return struct{}{}, op(t.t, sctx) }, t.cl.abandon)
	out := t.s.callerErr(ctx, t.cl.l, err)
	t.s.finish(&t.cl, err)
	return out
}

// Commit commits and gives the slot back.
func (t *tx) Commit(ctx context.Context) error {
	return t.end(ctx, pgx.Tx.Commit)
}

// Rollback rolls back and gives the slot back. After Commit (or a
// Rollback) it returns pgx.ErrTxClosed, as pgx's own.
func (t *tx) Rollback(ctx context.Context) error {
	return t.end(ctx, pgx.Tx.Rollback)
}

// Begin starts a savepoint under the transaction's slot.
func (t *tx) Begin(ctx context.Context) (pgx.Tx, error) {
	sctx, cancel, err := t.context(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	st, err := t.t.Begin(sctx)
	if err != nil {
		return nil, t.callerErr(ctx, err)
	}
	return &tx{t: st, s: t.s, root: t.top()}, nil
}

func (t *tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	sctx, cancel, err := t.context(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer cancel()
	tag, err := t.t.Exec(sctx, sql, args...)
	return tag, t.callerErr(ctx, err)
}

// Query runs a query in the transaction; the rows hold no slot of their
// own.
func (t *tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	sctx, cancel, err := t.context(ctx)
	if err != nil {
		return errRows{err}, err
	}
	r, err := t.t.Query(sctx, sql, args...)
	if err != nil {
		cancel()
		err = t.callerErr(ctx, err)
		return errRows{err}, err
	}
	return &rows{r: r, cl: call{ctx: ctx}, s: t.s, t: t.top(), cancel: cancel}, nil
}

func (t *tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	r, err := t.Query(ctx, sql, args...)
	if err != nil {
		return errRows{err}
	}
	return (*row)(r.(*rows))
}

func (t *tx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	sctx, cancel, err := t.context(ctx)
	if err != nil {
		return 0, err
	}
	defer cancel()
	n, err := t.t.CopyFrom(sctx, table, columns, src)
	return n, t.callerErr(ctx, err)
}

// SendBatch sends b in the transaction; its results hold no slot of their
// own.
func (t *tx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	sctx, cancel, err := t.context(ctx)
	if err != nil {
		return errBatch{err}
	}
	return &batch{br: t.t.SendBatch(sctx, b), cl: call{ctx: ctx}, s: t.s, t: t.top(), cancel: cancel}
}

func (t *tx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	sctx, cancel, err := t.context(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	sd, err := t.t.Prepare(sctx, name, sql)
	return sd, t.callerErr(ctx, err)
}

// LargeObjects returns pgx's large objects of the transaction; their calls
// run under the transaction's slot but not its deadline.
func (t *tx) LargeObjects() pgx.LargeObjects { return t.t.LargeObjects() }

// Conn returns the transaction's connection; calls made on it run outside
// the transaction's deadline.
func (t *tx) Conn() *pgx.Conn { return t.t.Conn() }
