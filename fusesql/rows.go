package fusesql

import (
	"context"
	"database/sql/driver"
	"io"
	"reflect"

	"github.com/fusebox-go/fusebox/executor"
)

// rows are a query's result. The query's slot is held until the rows end:
// Close, the last row read (Next's io.EOF on the last result set), or an
// error that breaks them. database/sql closes rows when the caller's
// context ends, and the driver sees the slot's context, which ends at the
// invocation deadline; nothing in this package waits for either, so open
// rows cost no goroutine.
type rows struct {
	dr     driver.Rows
	l      *executor.Lease    // nil in a transaction, whose slot it is
	cancel context.CancelFunc // of the statement's context in a transaction
	s      *shared
	ended  bool
}

func newRows(dr driver.Rows, l *executor.Lease, cancel context.CancelFunc, s *shared) *rows {
	return &rows{dr: dr, l: l, cancel: cancel, s: s}
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
	}
	if r.l != nil {
		r.l.Done(r.s.verdict(err))
	}
}

func (r *rows) Columns() []string { return r.dr.Columns() }

// Close closes the rows and then gives the slot back: when it returns, the
// supplier's slot is free.
func (r *rows) Close() error {
	err := r.dr.Close()
	r.end(err)
	return err
}

// Next reads the next row; the end of the last result set, or an error,
// ends the rows.
func (r *rows) Next(dest []driver.Value) error {
	err := r.dr.Next(dest)
	switch {
	case err == nil:
	case err == io.EOF:
		if !r.HasNextResultSet() {
			r.end(nil)
		}
	default:
		r.end(err)
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
	err := n.NextResultSet()
	if err == io.EOF {
		r.end(nil)
	} else if err != nil {
		r.end(err)
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
