package fusepgx

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// rows are a query's result. The query's slot and connection are held
// until the rows end: Close, or Next returning false (pgx closes the rows
// then). In a transaction they belong to the transaction, and ending them
// only ends the statement's context. Nothing waits on a goroutine for
// either end: open rows cost no goroutine of this package. pgx.Rows are
// not safe for concurrent use, so ended needs no lock.
type rows struct {
	r  pgx.Rows
	cl call // the query's; in a transaction, the caller's context alone
	s  *shared
	// t is the transaction the rows belong to, nil outside one; cancel
	// ends the statement's context.
	t      *tx
	cancel context.CancelFunc
	ended  bool
	// decoded: Scan or Values failed on the client side; the server
	// answered, so the rows' error is no failure of the database.
	decoded bool
	// err is the caller's error once the rows have ended.
	err error
}

// end ends the rows once: their connection goes back to the pool and the
// slot is given back with their error's verdict (or, in a transaction,
// the statement's context ends).
func (r *rows) end() {
	if r.ended {
		return
	}
	r.ended = true
	err := r.r.Err()
	if r.t != nil {
		r.err = r.t.callerErr(r.cl.ctx, err)
		r.cancel()
		return
	}
	if r.decoded {
		r.err = r.s.callerErr(r.cl.ctx, r.cl.l, err)
		r.s.finish(&r.cl, nil) // the server answered; the caller could not read it
		return
	}
	r.err = r.s.finish(&r.cl, err)
}

// inPgx runs fn, a method of pgx's rows that runs user code (a type's
// Scan or decoding), as the package's inPgx does for a call: if that code
// panics or ends the goroutine, the rows end (abandon) and the panic (or
// the Goexit) goes on.
func (r *rows) inPgx(fn func() error) error {
	_, err := inPgx("a pgx.Rows method", func() (struct{}, error) { return struct{}{}, fn() }, r.abandon)
	return err
}

// abandon ends the rows of user code that did not return: pgx's rows are
// closed, then the slot is given back with perr, a panic (or, in a
// transaction, the statement's context ends).
func (r *rows) abandon(perr error) {
	if r.ended {
		return
	}
	r.ended = true
	r.r.Close()
	if r.t != nil {
		r.cancel()
	} else {
		r.cl.abandon(perr)
	}
}

// Close closes the rows; when it returns, the slot is free.
func (r *rows) Close() {
	r.r.Close()
	r.end()
}

// Next reads the next row; false ends the rows.
func (r *rows) Next() bool {
	if r.r.Next() {
		return true
	}
	r.end()
	return false
}

// Err returns the rows' error, wrapped in executor.ErrTimeout when the
// invocation deadline, not the caller's, ended them.
func (r *rows) Err() error {
	if r.ended {
		return r.err
	}
	err := r.r.Err()
	if r.t != nil {
		return r.t.callerErr(r.cl.ctx, err)
	}
	return r.s.callerErr(r.cl.ctx, r.cl.l, err)
}

// Scan reads the current row into dest; an error closes the rows.
func (r *rows) Scan(dest ...any) error {
	err := r.inPgx(func() error { return r.r.Scan(dest...) })
	if err != nil {
		r.decoded = true
		r.end()
	}
	return err
}

// Values returns the current row's values; an error closes the rows.
func (r *rows) Values() ([]any, error) {
	v, err := inPgx("a pgx.Rows method", r.r.Values, r.abandon)
	if err != nil {
		r.decoded = true
		r.end()
	}
	return v, err
}

func (r *rows) CommandTag() pgconn.CommandTag                { return r.r.CommandTag() }
func (r *rows) FieldDescriptions() []pgconn.FieldDescription { return r.r.FieldDescriptions() }
func (r *rows) RawValues() [][]byte                          { return r.r.RawValues() }

// Conn returns the connection the rows are read from; calls made on it
// run outside every slot.
func (r *rows) Conn() *pgx.Conn { return r.r.Conn() }

// row is the pgx.Row of QueryRow: rows read for one row, as pgx's own.
type row rows

// Scan reads the first row into dest and closes the rows; no row is
// pgx.ErrNoRows.
func (w *row) Scan(dest ...any) error {
	r := (*rows)(w)
	for _, d := range dest {
		if _, ok := d.(*pgtype.DriverBytes); ok {
			r.Close()
			return errors.New("fusepgx: cannot scan into *pgtype.DriverBytes from QueryRow")
		}
	}
	if !r.Next() {
		if err := r.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.Scan(dest...); err != nil {
		return err
	}
	r.Close()
	return r.Err()
}

// errRows are the Rows (and Row) of a query that was refused or failed
// before it had any: closed, every method answering err.
type errRows struct{ err error }

func (e errRows) Close()                                       {}
func (e errRows) Err() error                                   { return e.err }
func (e errRows) CommandTag() pgconn.CommandTag                { return pgconn.CommandTag{} }
func (e errRows) FieldDescriptions() []pgconn.FieldDescription { return nil }
func (e errRows) Next() bool                                   { return false }
func (e errRows) Scan(...any) error                            { return e.err }
func (e errRows) Values() ([]any, error)                       { return nil, e.err }
func (e errRows) RawValues() [][]byte                          { return nil }
func (e errRows) Conn() *pgx.Conn                              { return nil }
