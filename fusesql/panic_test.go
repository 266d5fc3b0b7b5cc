package fusesql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

// panicConnector's connections panic in the driver call named by what, or
// with goexit end the goroutine there (runtime.Goexit, as t.FailNow does
// in a test's fake driver); "connect" is the dial itself.
type panicConnector struct {
	what   string
	goexit bool
}

func (c panicConnector) Connect(context.Context) (driver.Conn, error) {
	panicConn(c).maybePanic("connect")
	return panicConn(c), nil
}
func (panicConnector) Driver() driver.Driver { return nil }

// panicDriver is a panicConnector as a driver of the oldest kind, with no
// connector of its own, for WrapDriver: "open" is its Open.
type panicDriver panicConnector

func (d panicDriver) Open(string) (driver.Conn, error) {
	panicConn(d).maybePanic("open")
	return panicConn(d), nil
}

type panicConn struct {
	what   string
	goexit bool
}

func (c panicConn) maybePanic(what string) {
	if c.what == what {
		if c.goexit {
			runtime.Goexit()
		}
		panic("driver bug in " + what)
	}
}

func (panicConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (panicConn) Close() error                        { return nil }
func (panicConn) Begin() (driver.Tx, error)           { return nil, driver.ErrSkip }
func (c panicConn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) {
	c.maybePanic("begin")
	return panicTx(c), nil
}
func (c panicConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	c.maybePanic("query")
	return &panicRows{c: c, rows: fakeRows{sets: [][]int64{{1}, {2}}}}, nil
}
func (c panicConn) ExecContext(context.Context, string, []driver.NamedValue) (driver.Result, error) {
	c.maybePanic("exec")
	return driver.RowsAffected(1), nil
}

// panicTx panics in Commit or Rollback, as its connection says.
type panicTx panicConn

func (t panicTx) Commit() error   { panicConn(t).maybePanic("commit"); return nil }
func (t panicTx) Rollback() error { panicConn(t).maybePanic("rollback"); return nil }

// panicRows, two result sets of one row, panic in Next, NextResultSet or
// Close, as their connection says.
type panicRows struct {
	c    panicConn
	rows fakeRows
}

func (r *panicRows) Columns() []string { return r.rows.Columns() }
func (r *panicRows) Close() error      { r.c.maybePanic("rows.Close"); return nil }
func (r *panicRows) Next(dest []driver.Value) error {
	r.c.maybePanic("rows.Next")
	return r.rows.Next(dest)
}
func (r *panicRows) HasNextResultSet() bool { return r.rows.HasNextResultSet() }
func (r *panicRows) NextResultSet() error {
	r.c.maybePanic("rows.NextResultSet")
	return r.rows.NextResultSet()
}

// TestDriverPanicGivesTheSlotBack: a driver that panics in a call never
// returns from it, so its slot is given back as the panic passes, counted
// as a panic; the panic itself reaches the caller, as it would without
// fusesql. That holds for the dial of a connection (the connector's
// Connect, a driver's Open) and for the calls that end a slot held past
// the call that took it: Commit and Rollback of a transaction, Next,
// NextResultSet and Close of rows.
func TestDriverPanicGivesTheSlotBack(t *testing.T) {
	for what, call := range driverCalls {
		t.Run(what, func(t *testing.T) {
			db, g := panicDB(t, panicConnector{what: what})
			var got any
			func() {
				defer func() { got = recover() }()
				_ = call(context.Background(), db)
			}()
			assert.Equal(t, "driver bug in "+what, got, "the driver's panic reaches the caller")
			assertSlotFreedPanicCounted(t, g)
		})
	}
}

// TestDriverGoexitGivesTheSlotBack: a driver that ends the goroutine in a
// call (runtime.Goexit) never returns from it either: its slot is given
// back as the Goexit passes, counted as a panic, and the Goexit goes on.
func TestDriverGoexitGivesTheSlotBack(t *testing.T) {
	for what, call := range driverCalls {
		t.Run(what, func(t *testing.T) {
			db, g := panicDB(t, panicConnector{what: what, goexit: true})
			returned := false
			ended := make(chan struct{})
			go func() {
				defer close(ended)
				_ = call(context.Background(), db)
				returned = true
			}()
			<-ended
			assert.False(t, returned, "the Goexit went on")
			assertSlotFreedPanicCounted(t, g)
		})
	}
}

// driverCalls make the driver call named by their key, as a caller of
// database/sql would. The first call on a pool dials its connection:
// "connect" and "open" are a ping's dial (the connector's Connect, and the
// Open of a driver under WrapDriver, which panicDB uses for "open").
var driverCalls = map[string]func(ctx context.Context, db *sql.DB) error{
	"connect": func(ctx context.Context, db *sql.DB) error { return db.PingContext(ctx) },
	"open":    func(ctx context.Context, db *sql.DB) error { return db.PingContext(ctx) },
	"query": func(ctx context.Context, db *sql.DB) error {
		var v int
		return db.QueryRowContext(ctx, "SELECT 1").Scan(&v)
	},
	"exec": func(ctx context.Context, db *sql.DB) error {
		_, err := db.ExecContext(ctx, "DELETE FROM t")
		return err
	},
	"begin": func(ctx context.Context, db *sql.DB) error {
		_, err := db.BeginTx(ctx, nil)
		return err
	},
	"commit": func(ctx context.Context, db *sql.DB) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		return tx.Commit()
	},
	"rollback": func(ctx context.Context, db *sql.DB) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		return tx.Rollback()
	},
	"rows.Next": func(ctx context.Context, db *sql.DB) error {
		rows, err := db.QueryContext(ctx, "SELECT 1")
		if err != nil {
			return err
		}
		rows.Next()
		return rows.Close()
	},
	"rows.NextResultSet": func(ctx context.Context, db *sql.DB) error {
		rows, err := db.QueryContext(ctx, "SELECT 1; SELECT 2")
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		rows.NextResultSet()
		return rows.Close()
	},
	"rows.Close": func(ctx context.Context, db *sql.DB) error {
		rows, err := db.QueryContext(ctx, "SELECT 1")
		if err != nil {
			return err
		}
		return rows.Close()
	},
}

// panicDB is a pool over c, in a group of its own that the test's cleanup
// closes, bounded: a slot the driver kept would hold Close forever. For
// "open" the pool is that of WrapDriver over c as a panicDriver.
func panicDB(t *testing.T, c panicConnector) (*sql.DB, *executor.Group) {
	g, err := executor.NewGroup(executor.GroupConfig{Default: supplierConfig(2)})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, g.Close(ctx))
	})
	var w *fusesql.Connector
	if c.what == "open" {
		d, err := fusesql.WrapDriver(panicDriver(c), fusesql.Config{Group: g})
		require.NoError(t, err)
		dc, err := d.OpenConnector("dsn")
		require.NoError(t, err)
		w = dc.(*fusesql.Connector)
	} else {
		w, err = fusesql.Wrap(c, fusesql.Config{Group: g})
		require.NoError(t, err)
	}
	db := w.OpenDB()
	t.Cleanup(func() { db.Close() })
	return db, g
}

func assertSlotFreedPanicCounted(t *testing.T, g *executor.Group) {
	t.Helper()
	ex, ok := g.Lookup(fusesql.DefaultSupplier)
	require.True(t, ok)
	st := ex.Stats()
	assert.Zero(t, st.InUse, "the call's slot is given back")
	assert.EqualValues(t, 1, st.Panics, "the driver's panic or Goexit is counted as a panic")
}
