package fusepgx

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// batch is the results of a batch: its slot and connection are held until
// Close. In a transaction it belongs to the transaction, and Close ends
// only the batch's context. A pgx.BatchResults is not safe for concurrent
// use, so its fields need no lock.
type batch struct {
	br pgx.BatchResults
	cl call // the batch's; in a transaction, the caller's context alone
	s  *shared
	// t is the transaction the batch belongs to, nil outside one; cancel
	// ends the batch's context.
	t      *tx
	cancel context.CancelFunc
	ended  bool
	// failed is the first error of a statement that says the database is
	// in trouble (its verdict is not nil), the batch's outcome.
	failed error
}

// note records err, a statement's error, for Close, and returns what the
// caller gets.
func (b *batch) note(err error) error {
	if err == nil || b.ended {
		return err
	}
	if b.t != nil {
		return b.t.callerErr(b.cl.ctx, err)
	}
	if b.failed == nil && DefaultClassify(err) != nil {
		b.failed = err
	}
	return b.s.callerErr(b.cl.ctx, b.cl.l, err)
}

// Exec reads the next statement's result.
func (b *batch) Exec() (pgconn.CommandTag, error) {
	tag, err := b.br.Exec()
	return tag, b.note(err)
}

// Query reads the next statement's rows; they belong to the batch.
func (b *batch) Query() (pgx.Rows, error) {
	r, err := b.br.Query()
	return r, b.note(err)
}

// QueryRow reads the next statement's row; it belongs to the batch.
func (b *batch) QueryRow() pgx.Row { return b.br.QueryRow() }

// Close reads what is left of the batch, runs the queued statements'
// callbacks, and gives the slot back: when it returns, the slot is free.
// The batch's outcome is the first failure a statement reported, else
// Close's error.
func (b *batch) Close() error {
	if b.ended {
		return b.br.Close()
	}
	_, err := inPgx("pgx.Batch", func() (struct{}, error) { return struct{}{}, b.br.Close() }, b.abandon)
	b.ended = true
	if b.t != nil {
		out := b.t.callerErr(b.cl.ctx, err)
		b.cancel()
		return out
	}
	outcome := err
	if b.failed != nil {
		outcome = b.failed
	}
	out := b.s.callerErr(b.cl.ctx, b.cl.l, err)
	b.s.finish(&b.cl, outcome)
	return out
}

// abandon ends the batch if Close's callbacks (user code) panic or end
// the goroutine (inPgx), perr saying so.
func (b *batch) abandon(perr error) {
	b.ended = true
	if b.t != nil {
		b.cancel()
	} else {
		b.cl.abandon(perr)
	}
}

// errBatch is the BatchResults of a batch that was refused: every method
// answers err.
type errBatch struct{ err error }

func (e errBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, e.err }
func (e errBatch) Query() (pgx.Rows, error)         { return errRows(e), e.err }
func (e errBatch) QueryRow() pgx.Row                { return errRows(e) }
func (e errBatch) Close() error                     { return e.err }
