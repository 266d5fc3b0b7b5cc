package fusesql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

// fakeConnector is a driver in memory whose calls do what the test's
// fakeFuncs say, and by default answer at once: one row of one column for a
// query, one row affected for an Exec. It needs no server, so the tests on
// it run inside testing/synctest bubbles, where deadlines are exact and
// nothing waits in real time.
type fakeConnector struct{ f *fakeFuncs }

// fakeFuncs are the calls of a fakeConnector's connections that a test
// makes do something else; nil means the default.
type fakeFuncs struct {
	query func(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error)
	exec  func(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error)
	// connect runs at the start of each dial; an error fails the dial.
	connect func(ctx context.Context) error
}

func (c fakeConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if c.f.connect != nil {
		if err := c.f.connect(ctx); err != nil {
			return nil, err
		}
	}
	return &fakeConn{c.f}, nil
}

func (fakeConnector) Driver() driver.Driver { return nil }

type fakeConn struct{ f *fakeFuncs }

func (c *fakeConn) Prepare(string) (driver.Stmt, error) { return fakeStmt{}, nil }
func (c *fakeConn) Close() error                        { return nil }
func (c *fakeConn) Begin() (driver.Tx, error)           { return fakeTx{}, nil }
func (c *fakeConn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) {
	return fakeTx{}, nil
}

func (c *fakeConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	if c.f.query != nil {
		return c.f.query(ctx, q, args)
	}
	return &fakeRows{sets: [][]int64{{1}}}, nil
}

func (c *fakeConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	if c.f.exec != nil {
		return c.f.exec(ctx, q, args)
	}
	return driver.RowsAffected(1), nil
}

// fakeStmt is a prepared statement of a fakeConn, of the oldest kind (no
// context): it answers as the connection does by default.
type fakeStmt struct{}

func (fakeStmt) Close() error  { return nil }
func (fakeStmt) NumInput() int { return -1 }

// Exec and Query are the methods of a driver of the oldest kind.
func (fakeStmt) Exec([]driver.Value) (driver.Result, error) { return driver.RowsAffected(1), nil }

func (fakeStmt) Query([]driver.Value) (driver.Rows, error) {
	return &fakeRows{sets: [][]int64{{1}}}, nil
}

type fakeTx struct{}

func (fakeTx) Commit() error   { return nil }
func (fakeTx) Rollback() error { return nil }

// fakeRows yields the rows of its result sets, one int64 column each. If
// ctx is set, Next fails with its error once it has ended, as a driver
// reading from the server under that context does.
type fakeRows struct {
	sets     [][]int64
	set, row int
	ctx      context.Context
}

func (r *fakeRows) Columns() []string { return []string{"v"} }
func (r *fakeRows) Close() error      { return nil }

func (r *fakeRows) Next(dest []driver.Value) error {
	if r.ctx != nil && r.ctx.Err() != nil {
		return r.ctx.Err()
	}
	if r.set >= len(r.sets) || r.row >= len(r.sets[r.set]) {
		return io.EOF
	}
	dest[0] = r.sets[r.set][r.row]
	r.row++
	return nil
}

func (r *fakeRows) HasNextResultSet() bool { return r.set+1 < len(r.sets) }

func (r *fakeRows) NextResultSet() error {
	if !r.HasNextResultSet() {
		return io.EOF
	}
	r.set, r.row = r.set+1, 0
	return nil
}

// fakeDB returns a pool over a fakeConnector doing f, wrapped with cfg on a
// group whose default supplier, "db", has cfg's executor settings. It must
// be called inside a synctest bubble: the group is closed, within a
// bounded (bubble) time, and the pool when the test ends.
func fakeDB(t *testing.T, ecfg executor.Config, f *fakeFuncs, cfg fusesql.Config) (*sql.DB, *executor.Group) {
	t.Helper()
	g, err := executor.NewGroup(executor.GroupConfig{Default: ecfg})
	require.NoError(t, err)
	t.Cleanup(func() {
		// Bounded: a slot given back never would hold Close forever.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		assert.NoError(t, g.Close(ctx), "every slot was given back")
	})
	cfg.Group = g
	c, err := fusesql.Wrap(fakeConnector{f}, cfg)
	require.NoError(t, err)
	db := c.OpenDB()
	t.Cleanup(func() { db.Close() })
	return db, g
}

// fakeConfig is the executor configuration of the tests on fakeDB: two
// slots, a one-second invocation timeout.
func fakeConfig() executor.Config {
	return executor.Config{Slots: 2, InvocationTimeout: time.Second, Breaker: breaker.Config{ResetTimeout: 2 * time.Second}}
}

func dbStats(t *testing.T, g *executor.Group) executor.Stats {
	t.Helper()
	ex, ok := g.Lookup(fusesql.DefaultSupplier)
	require.True(t, ok)
	return ex.Stats()
}
