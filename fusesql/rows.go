package fusesql

import (
	"context"
	"database/sql/driver"
	"io"
	"reflect"

	"github.com/fusebox-go/fusebox/executor"
)

// rows are a query's result. The query's slot is held until the rows end:
// Close, or the last row read (Next's io.EOF on the last result set). An
// error that breaks them ends them at Close, which database/sql calls at
// once, inside the Next that met the error: the driver may still work on
// the connection there (pgx reads the rest of the result), and does so
// under the slot. database/sql closes rows when the caller's
// context ends, and the driver sees the slot's context, which ends at the
// invocation deadline (or the caller's, when its deadline comes first:
// driverContext); nothing in this package waits for either, so open
// rows cost no goroutine.
type rows struct {
	dr driver.Rows
	// ctx is the caller's context of the query: an error of Next that the
	// invocation deadline caused, not ctx's own, is wrapped in
	// executor.ErrTimeout (callerErr).
	ctx context.Context
	// l is the query's slot, or in a transaction the transaction's, which
	// the rows do not give back.
	l *executor.Lease
	// cancel, in a transaction, ends the statement's context; nil
	// otherwise.
	cancel context.CancelFunc
	s      *shared
	ended  bool
	// failed is the driver's error that broke the rows, recorded when
	// Close ends them.
	failed error
}

func newRows(ctx context.Context, dr driver.Rows, l *executor.Lease, cancel context.CancelFunc, s *shared) *rows {
	return &rows{dr: dr, ctx: ctx, l: l, cancel: cancel, s: s}
}

// end gives the slot back once, recording err's verdict. database/sql
// calls Next, NextResultSet and Close under one lock, so ended needs none.
func (r *rows) end(err error) {
	if r.ended {
		return
	}
	r.ended = true
	if r.cancel != nil {
		r.cancel()
		return
	}
	r.s.done(r.l, err)
}

// inDriver runs fn, a call of the driver's rows, as the package's
// inDriver does for a call: if the driver panics or ends the goroutine
// instead of returning, the rows end (the slot is given back, the panic
// recorded as the query's failure) and the panic (or the Goexit) goes on.
func (r *rows) inDriver(fn func() error) error {
	_, err := inDriverEnding(func() (struct{}, error) { return struct{}{}, fn() }, r.abandon)
	return err
}

// abandon ends the rows of a driver that did not return.
func (r *rows) abandon(perr error) {
	if r.ended {
		return
	}
	r.ended = true
	if r.cancel != nil {
		r.cancel()
	} else {
		r.l.Done(perr)
	}
}

// fail notes the driver's error err, which Close records, and returns
// what the caller gets: err, wrapped in executor.ErrTimeout when the
// invocation deadline ended the query (callerErr, while the slot is held).
func (r *rows) fail(err error) error {
	if r.ended {
		return err
	}
	out := r.s.callerErr(r.ctx, r.l, err)
	if r.failed == nil {
		r.failed = err
	}
	return out
}

func (r *rows) Columns() []string { return r.dr.Columns() }

// Close closes the rows and then gives the slot back: when it returns, the
// supplier's slot is free.
func (r *rows) Close() error {
	err := r.inDriver(r.dr.Close)
	outcome := err
	if r.failed != nil {
		outcome = r.failed // the error that broke them is the query's outcome
	}
	r.end(outcome)
	return err
}

// Next reads the next row; the end of the last result set, or an error,
// ends the rows. io.EOF is returned as it is: database/sql compares it.
func (r *rows) Next(dest []driver.Value) error {
	var last bool
	err := r.inDriver(func() error {
		err := r.dr.Next(dest)
		last = err == io.EOF && !r.HasNextResultSet()
		return err
	})
	switch {
	case last:
		r.end(nil)
	case err != nil && err != io.EOF:
		return r.fail(err)
	}
	return err
}

func (r *rows) HasNextResultSet() bool {
	if n, ok := r.dr.(driver.RowsNextResultSet); ok {
		return n.HasNextResultSet()
	}
	return false
}

func (r *rows) NextResultSet() error {
	n, ok := r.dr.(driver.RowsNextResultSet)
	if !ok {
		return io.EOF
	}
	err := r.inDriver(n.NextResultSet)
	if err == io.EOF {
		r.end(nil)
	} else if err != nil {
		return r.fail(err)
	}
	return err
}

// The column type methods answer as the driver's do, or as database/sql
// does for a driver without them.

func (r *rows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.dr.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

func (r *rows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.dr.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *rows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.dr.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *rows) ColumnTypeNullable(i int) (bool, bool) {
	if t, ok := r.dr.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *rows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if t, ok := r.dr.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}
