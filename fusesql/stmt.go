package fusesql

import (
	"context"
	"database/sql/driver"
	"errors"
)

// stmt is a prepared statement of one connection. Each execution takes a
// slot of the supplier of its context (and of the statement's text for
// Config.Key), or runs under its transaction's.
type stmt struct {
	c     *conn
	ds    driver.Stmt
	query string
}

func (s *stmt) Close() error  { return s.ds.Close() }
func (s *stmt) NumInput() int { return s.ds.NumInput() }

// CheckNamedValue converts arguments as the statement's driver would: the
// statement's checker, else the connection's. (database/sql asks the
// statement only, when it has the method.)
func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.ds.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return s.c.CheckNamedValue(nv)
}

// ExecContext executes the statement under a slot held until it returns.
func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if t := s.c.tx; t != nil {
		tctx, cancel := t.context(ctx)
		defer cancel()
		res, err := s.exec(tctx, args)
		return res, t.callerErr(ctx, err)
	}
	l, lctx, err := s.c.begin(ctx, s.query)
	if err != nil {
		return nil, err
	}
	res, err := inDriver(l, func() (driver.Result, error) { return s.exec(lctx, args) })
	return res, s.c.s.end(ctx, l, err)
}

// QueryContext runs the statement under a slot held until its rows end.
func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if t := s.c.tx; t != nil {
		tctx, cancel := t.context(ctx)
		r, err := s.query1(tctx, args)
		if err != nil {
			cancel()
			return nil, t.callerErr(ctx, err)
		}
		return newRows(ctx, r, t.l, cancel, s.c.s), nil
	}
	l, lctx, err := s.c.begin(ctx, s.query)
	if err != nil {
		return nil, err
	}
	r, err := inDriver(l, func() (driver.Rows, error) { return s.query1(lctx, args) })
	if err != nil {
		return nil, s.c.s.end(ctx, l, err)
	}
	return newRows(ctx, r, l, nil, s.c.s), nil
}

func (s *stmt) exec(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if e, ok := s.ds.(driver.StmtExecContext); ok {
		return e.ExecContext(ctx, args)
	}
	v, err := values(ctx, args)
	if err != nil {
		return nil, err
	}
	//lint:ignore SA1019 the driver has nothing newer
	return s.ds.Exec(v)
}

func (s *stmt) query1(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := s.ds.(driver.StmtQueryContext); ok {
		return q.QueryContext(ctx, args)
	}
	v, err := values(ctx, args)
	if err != nil {
		return nil, err
	}
	//lint:ignore SA1019 the driver has nothing newer
	return s.ds.Query(v)
}

// values turns named arguments into the positional ones of an old driver.
func values(ctx context.Context, args []driver.NamedValue) ([]driver.Value, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v := make([]driver.Value, len(args))
	for i, a := range args {
		if a.Name != "" {
			return nil, errors.New("fusesql: the driver does not support named arguments")
		}
		v[i] = a.Value
	}
	return v, nil
}

// Exec and Query are the statement's methods without a context;
// database/sql does not call them.
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func named(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return nv
}
