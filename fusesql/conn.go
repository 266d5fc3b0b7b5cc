package fusesql

import (
	"context"
	"database/sql/driver"
	"errors"
	"time"

	"github.com/fusebox-go/fusebox/executor"
)

// conn is one connection of the pool. database/sql never uses a
// connection from two goroutines at once (it holds the connection's lock
// around every driver call), so its fields need no lock.
type conn struct {
	dc driver.Conn
	s  *shared
	// reset: database/sql asked for a ResetSession, which runs at the
	// start of the next call admitted on the connection, under its slot.
	reset bool
	// tx is the open transaction: its statements run under its slot.
	tx *tx
}

func newConn(dc driver.Conn, s *shared) *conn { return &conn{dc: dc, s: s} }

// ResetSession runs when database/sql takes the connection from the pool
// for a new call, before that call reaches the driver, with the caller's
// context. A driver's reset may talk to the server (pgx pings a connection
// idle for over a second), and here no slot guards it: a caller would wait
// for a database that hangs until its context ends. So the reset is only
// noted here and runs at the start of the next call admitted on this
// connection, under that call's slot and deadline. A refused call thus
// costs no round trip.
func (c *conn) ResetSession(context.Context) error {
	if _, ok := c.dc.(driver.SessionResetter); ok {
		c.reset = true
	}
	return nil
}

// begin admits a call on the connection: a slot of the supplier of ctx
// and query, then the pending session reset. It returns the lease and
// the context to give the driver (driverContext).
func (c *conn) begin(ctx context.Context, query string) (*executor.Lease, context.Context, error) {
	l, err := c.s.lease(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	lctx := driverContext(ctx, l)
	if c.reset {
		c.reset = false
		// As in database/sql, only driver.ErrBadConn counts: the pool then
		// discards the connection and retries the call on another, whose
		// outcome is the one recorded. A connection that died in the pool
		// (the server restarted) says nothing of the database now, so the
		// try is recorded as ignored; a reset that hung has had its timeout
		// recorded at the deadline.
		err := inDriverErr(l, func() error { return c.dc.(driver.SessionResetter).ResetSession(lctx) })
		if errors.Is(err, driver.ErrBadConn) {
			l.Skip() // a connection that died in the pool says nothing of the database now
			return nil, nil, err
		}
	}
	return l, lctx, nil
}

// driverContext is the context the driver gets for a call admitted under
// l: the lease's context, which ends at the invocation deadline, or the
// caller's own ctx when its deadline comes at or before that one. The
// caller's deadline then ends the call when the lease's would (the lease's
// deadline is the earlier of the two), and so does its cancellation, but
// the driver watches a context that exists already instead of one made
// for the call: following the caller's context from the lease's costs a
// child of it (context.WithCancel) and the lease context's state, 4
// allocations a query on pgx.
//
// The caller's context is handed over only when it can end (a Done
// channel): a context of a user's own type may report a deadline and
// never end. One whose Deadline says earlier than its Done fires breaks
// the context contract; under it the call runs to Done. (A deadline on
// the wall clock alone, as time.Unix makes, is read by the executor from
// the same wall clock, so the two end together unless the wall clock is
// stepped in between.)
//
// What the caller's context does not carry is the executor's Close
// giving up on the call: such a call runs on until its caller's deadline,
// keeping its slot, as a driver that ignores its context would. A
// statement in a transaction is given a context the same way
// (tx.context).
func driverContext(ctx context.Context, l *executor.Lease) context.Context {
	lctx := l.Context()
	if d, _ := lctx.Deadline(); endsBy(ctx, d) {
		return ctx
	}
	return lctx
}

// endsBy reports whether ctx ends by d (see driverContext): its deadline
// is at or before d, and it can end. The deadline is compared first:
// Done makes a context.WithTimeout's channel, which a context not handed
// over may not need.
func endsBy(ctx context.Context, d time.Time) bool {
	cd, ok := ctx.Deadline()
	return ok && !cd.After(d) && ctx.Done() != nil
}

// IsValid reports whether the pool may keep the connection.
func (c *conn) IsValid() bool {
	if v, ok := c.dc.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// CheckNamedValue lets the driver convert arguments, as it would unwrapped.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.dc.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// QueryContext runs a query under a slot that is held until its rows are
// closed or read to the end.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.dc.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip // database/sql prepares the statement instead
	}
	if t := c.tx; t != nil {
		tctx, cancel := t.context(ctx)
		r, err := q.QueryContext(tctx, query, args)
		if err != nil {
			cancel()
			return nil, t.callerErr(ctx, err)
		}
		return newRows(ctx, r, t.l, cancel, c.s), nil
	}
	l, lctx, err := c.begin(ctx, query)
	if err != nil {
		return nil, err
	}
	r, err := inDriver(l, func() (driver.Rows, error) { return q.QueryContext(lctx, query, args) })
	if err != nil {
		return nil, c.s.end(ctx, l, err)
	}
	return newRows(ctx, r, l, nil, c.s), nil
}

// ExecContext runs a statement under a slot held until it returns.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.dc.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	if t := c.tx; t != nil {
		tctx, cancel := t.context(ctx)
		defer cancel()
		res, err := e.ExecContext(tctx, query, args)
		return res, t.callerErr(ctx, err)
	}
	l, lctx, err := c.begin(ctx, query)
	if err != nil {
		return nil, err
	}
	res, err := inDriver(l, func() (driver.Result, error) { return e.ExecContext(lctx, query, args) })
	return res, c.s.end(ctx, l, err)
}

// Ping pings the database under a slot, if the driver can.
func (c *conn) Ping(ctx context.Context) error {
	p, ok := c.dc.(driver.Pinger)
	if !ok {
		return nil
	}
	l, lctx, err := c.begin(ctx, "")
	if err != nil {
		return err
	}
	err = inDriverErr(l, func() error { return p.Ping(lctx) })
	return c.s.end(ctx, l, err)
}

// PrepareContext prepares a statement, a round trip to the server, under
// a slot held until the server answers (or the transaction's).
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if t := c.tx; t != nil {
		tctx, cancel := t.context(ctx)
		defer cancel()
		ds, err := c.prepare(tctx, query)
		if err != nil {
			return nil, t.callerErr(ctx, err)
		}
		return &stmt{c: c, ds: ds, query: query}, nil
	}
	l, lctx, err := c.begin(ctx, query)
	if err != nil {
		return nil, err
	}
	ds, err := inDriver(l, func() (driver.Stmt, error) { return c.prepare(lctx, query) })
	if err = c.s.end(ctx, l, err); err != nil {
		return nil, err
	}
	return &stmt{c: c, ds: ds, query: query}, nil
}

func (c *conn) prepare(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := c.dc.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.dc.Prepare(query)
}

// Prepare is PrepareContext without a context; database/sql does not call
// it.
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// BeginTx starts a transaction under a slot of the supplier of ctx, held
// until Commit or Rollback returns. The driver gets the slot's context
// (or the caller's, when its deadline comes first: driverContext): it ends
// at the supplier's invocation timeout, which thus bounds the whole
// transaction.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	l, lctx, err := c.begin(ctx, "")
	if err != nil {
		return nil, err
	}
	dt, err := inDriver(l, func() (driver.Tx, error) { return c.beginTx(lctx, opts) })
	if err != nil {
		return nil, c.s.end(ctx, l, err)
	}
	c.tx = &tx{c: c, dt: dt, l: l}
	return c.tx, nil
}

func (c *conn) beginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.dc.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	if opts.Isolation != driver.IsolationLevel(0) || opts.ReadOnly {
		return nil, errors.New("fusesql: the driver does not support isolation levels or read-only transactions")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	//lint:ignore SA1019 the driver has nothing newer
	return c.dc.Begin()
}

// Begin is BeginTx with the default options; database/sql does not call
// it.
func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// Close closes the connection. database/sql ends a transaction before it
// closes its connection; should it not, the transaction's slot is given
// back here.
func (c *conn) Close() error {
	if c.tx != nil {
		c.tx.end(driver.ErrBadConn)
	}
	return c.dc.Close()
}

// tx is an open transaction and the slot it holds.
type tx struct {
	c  *conn
	dt driver.Tx
	l  *executor.Lease
}

// context is the context of a statement in the transaction: ctx, ended at
// the latest by the transaction's deadline; ctx itself when it is sure to
// end by then (endsBy).
func (t *tx) context(ctx context.Context) (context.Context, context.CancelFunc) {
	d, _ := t.l.Context().Deadline() // a lease's context always has one
	if endsBy(ctx, d) {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, d)
}

// callerErr is the error the caller of a statement in the transaction
// gets for the driver's err: wrapped in executor.ErrTimeout when the
// transaction's deadline, not ctx, the statement's context, ended it, as
// outside a transaction (shared.callerErr).
func (t *tx) callerErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return t.c.s.callerErr(ctx, t.l, err)
}

// Commit commits and gives the slot back. The transaction is over whatever
// the driver does, so it is no longer the connection's before the driver
// is called, and a driver that panics or ends the goroutine gives the slot back (guard).
func (t *tx) Commit() error {
	t.c.tx = nil
	err := inDriverErr(t.l, t.dt.Commit)
	return t.end(err)
}

// Rollback rolls back and gives the slot back, as Commit does.
func (t *tx) Rollback() error {
	t.c.tx = nil
	err := inDriverErr(t.l, t.dt.Rollback)
	return t.end(err)
}

func (t *tx) end(err error) error {
	t.c.tx = nil
	return t.c.s.end(context.Background(), t.l, err)
}
