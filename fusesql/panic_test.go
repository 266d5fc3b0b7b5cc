package fusesql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

// panicConnector's connections panic in the driver call named by what.
type panicConnector struct{ what string }

func (c panicConnector) Connect(context.Context) (driver.Conn, error) { return panicConn(c), nil }
func (panicConnector) Driver() driver.Driver                          { return nil }

type panicConn struct{ what string }

func (c panicConn) maybePanic(what string) {
	if c.what == what {
		panic("driver bug in " + what)
	}
}

func (panicConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (panicConn) Close() error                        { return nil }
func (panicConn) Begin() (driver.Tx, error)           { return nil, driver.ErrSkip }
func (c panicConn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) {
	c.maybePanic("begin")
	return nil, driver.ErrBadConn
}
func (c panicConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	c.maybePanic("query")
	return &memRows{}, nil
}
func (c panicConn) ExecContext(context.Context, string, []driver.NamedValue) (driver.Result, error) {
	c.maybePanic("exec")
	return driver.RowsAffected(1), nil
}

// TestDriverPanicGivesTheSlotBack: a driver that panics in a call never
// returns from it, so its slot is given back as the panic passes, counted
// as a panic; the panic itself reaches the caller, as it would without
// fusesql.
func TestDriverPanicGivesTheSlotBack(t *testing.T) {
	calls := map[string]func(ctx context.Context, db *sql.DB) error{
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
	}
	for what, call := range calls {
		t.Run(what, func(t *testing.T) {
			g, err := executor.NewGroup(executor.GroupConfig{Default: supplierConfig(2)})
			require.NoError(t, err)
			defer func() {
				// Bounded: a slot the panic kept would hold Close forever.
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				assert.NoError(t, g.Close(ctx))
			}()
			c, err := fusesql.Wrap(panicConnector{what}, fusesql.Config{Group: g})
			require.NoError(t, err)
			db := c.OpenDB()
			defer db.Close()

			var got any
			func() {
				defer func() { got = recover() }()
				_ = call(context.Background(), db)
			}()
			assert.Equal(t, "driver bug in "+what, got, "the driver's panic reaches the caller")

			ex, ok := g.Lookup(fusesql.DefaultSupplier)
			require.True(t, ok)
			st := ex.Stats()
			assert.Zero(t, st.Busy, "the panicked call's slot is given back")
			assert.EqualValues(t, 1, st.Panics, "the panic is counted")
		})
	}
}
