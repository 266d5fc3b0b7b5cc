package fusesql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

type sqlState string

func (s sqlState) Error() string    { return "SQLSTATE " + string(s) }
func (s sqlState) SQLState() string { return string(s) }

func TestDefaultClassify(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		failure bool
	}{
		{"no error is an answer", nil, false},
		{"no rows is an answer", sql.ErrNoRows, false},
		{"a wrapped no rows is an answer", fmt.Errorf("find: %w", sql.ErrNoRows), false},
		{"a data exception (22) is an answer", sqlState("22012"), false},
		{"a constraint violation (23) is an answer", fmt.Errorf("insert: %w", sqlState("23505")), false},
		{"an authorization error (28) is an answer", sqlState("28P01"), false},
		{"a syntax or permission error (42) is an answer", sqlState("42601"), false},
		{"a connection exception (08) is a failure", sqlState("08006"), true},
		{"a cancelled statement (57014) is a failure", sqlState("57014"), true},
		{"too many connections (53300) is a failure", sqlState("53300"), true},
		{"a bad connection is a failure", driver.ErrBadConn, true},
		{"a deadline is a failure", context.DeadlineExceeded, true},
		{"an unknown error is a failure", errors.New("EOF"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fusesql.DefaultClassify(tt.err)
			if tt.failure {
				assert.Equal(t, tt.err, got)
			} else {
				assert.NoError(t, got)
			}
		})
	}
}

// The real server's answers to wrong calls (syntax, constraints, bad
// data, permissions) do not count against the database: a breaker that
// opens on the first failure stays closed through all of them.
func TestServerAnswersAreNotFailures(t *testing.T) {
	t.Parallel()
	cfg := supplierConfig(2)
	cfg.Breaker.ConsecutiveFailures = 1
	exec(t, "CREATE TABLE answers (id int PRIMARY KEY)", "INSERT INTO answers VALUES (1)",
		"CREATE ROLE nobody NOLOGIN", "CREATE TABLE secret (id int)")
	s := newShop(t, map[string]executor.Config{"db": cfg}, fusesql.Config{})
	ctx := context.Background()
	var v int
	for _, q := range []string{
		"SELEC 1",                               // 42601 syntax error
		"SELECT * FROM no_such_table",           // 42P01
		"INSERT INTO answers VALUES (1)",        // 23505 unique violation
		"SELECT 1/0",                            // 22012 division by zero
		"SELECT 'x'::int",                       // 22P02
		"SET ROLE nobody; SELECT * FROM secret", // 42501 permission denied
	} {
		_, err := s.db.ExecContext(ctx, q)
		require.Error(t, err, q)
		assert.False(t, errors.Is(err, breaker.ErrOpen), q)
	}
	err := s.db.QueryRowContext(ctx, "SELECT id FROM answers WHERE id = 2").Scan(&v)
	assert.ErrorIs(t, err, sql.ErrNoRows)
	st := s.stats(t, "db")
	assert.Equal(t, breaker.Closed, st.Breaker.State)
	assert.Zero(t, st.Failures)
	s.released(t, "db")
}

// Config.Classify overrides the default, and a Classify that panics counts
// the call as a failure (a *breaker.PanicError naming it) while the caller
// still gets the driver's result.
func TestClassifyOverrideAndPanic(t *testing.T) {
	t.Parallel()
	t.Run("a classifier that counts syntax errors", func(t *testing.T) {
		cfg := supplierConfig(2)
		cfg.Breaker.ConsecutiveFailures = 1
		s := newShop(t, map[string]executor.Config{"db": cfg}, fusesql.Config{Classify: func(err error) error { return err }})
		_, err := s.db.Exec("SELEC 1")
		require.Error(t, err)
		assert.Equal(t, breaker.Open, s.stats(t, "db").Breaker.State)
		_, err = s.db.Exec("SELECT 1")
		assert.ErrorIs(t, err, breaker.ErrOpen)
	})
	t.Run("a classifier that panics", func(t *testing.T) {
		s := newShop(t, map[string]executor.Config{"db": supplierConfig(2)}, fusesql.Config{Classify: func(error) error { panic("boom") }})
		var v int
		require.NoError(t, s.db.QueryRow("SELECT 3").Scan(&v), "the caller gets the result")
		assert.Equal(t, 3, v)
		st := s.stats(t, "db")
		assert.Equal(t, uint64(1), st.Panics, "the query (a dial that succeeds is not classified)")
		assert.Equal(t, st.Panics, st.Failures, "each a failure")
	})
}

// Keys: WithSupplier first, then Config.Key, then Default; a name outside
// the configuration is refused without touching the database; a Key that
// panics fails its call with a *breaker.PanicError.
func TestSupplierKeys(t *testing.T) {
	t.Parallel()
	var seen []string
	key := func(_ context.Context, q string) string {
		seen = append(seen, q)
		switch q {
		case "SELECT 2":
			return "reports"
		case "SELECT 3":
			panic("key")
		}
		return ""
	}
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(2), "reports": supplierConfig(2), "orders": supplierConfig(2)},
		fusesql.Config{Key: key})
	ctx := context.Background()
	var v int
	require.NoError(t, s.db.QueryRowContext(ctx, "SELECT 1").Scan(&v))
	require.NoError(t, s.db.QueryRowContext(ctx, "SELECT 2").Scan(&v))
	require.NoError(t, s.db.QueryRowContext(fusesql.WithSupplier(ctx, "orders"), "SELECT 2").Scan(&v))
	assert.Equal(t, uint64(1), s.stats(t, "reports").Successes)
	assert.Equal(t, uint64(1), s.stats(t, "orders").Successes)
	assert.GreaterOrEqual(t, s.stats(t, "db").Successes, uint64(1))
	assert.Contains(t, seen, "SELECT 1")

	err := s.db.QueryRowContext(fusesql.WithSupplier(ctx, "typo"), "SELECT 1").Scan(&v)
	assert.ErrorIs(t, err, executor.ErrUnknownSupplier)
	assert.Contains(t, err.Error(), `"typo"`)

	err = s.db.QueryRowContext(ctx, "SELECT 3").Scan(&v)
	var pe *breaker.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "fusesql.Config.Key", pe.Callback)
	s.released(t, "db", "reports", "orders")
}

func TestConfigErrors(t *testing.T) {
	g, err := executor.NewGroup(executor.GroupConfig{
		Default: supplierConfig(2), Strict: true,
		Suppliers: map[string]executor.Config{"db": supplierConfig(3), "orders": supplierConfig(5)},
	})
	require.NoError(t, err)
	defer g.Close(context.Background())
	tests := []struct {
		name string
		base driver.Connector
		cfg  fusesql.Config
		want string
	}{
		{"a nil connector", nil, fusesql.Config{Group: g}, "base connector is nil"},
		{"no group", base(t), fusesql.Config{}, "Config.Group is nil"},
		{"an empty supplier", base(t), fusesql.Config{Group: g, Suppliers: []string{"orders", ""}}, "Config.Suppliers[1] is empty"},
		{"a blank supplier", base(t), fusesql.Config{Group: g, Suppliers: []string{" "}}, "Config.Suppliers[0] is empty"},
		{"a blank default", base(t), fusesql.Config{Group: g, Default: "  "}, `Config.Default "  " is blank`},
		{"a name the strict group lacks", base(t), fusesql.Config{Group: g, Suppliers: []string{"catalog"}}, `"catalog"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fusesql.Wrap(tt.base, tt.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err = fusesql.WrapDriver(nil, fusesql.Config{Group: g})
	assert.ErrorContains(t, err, "base driver is nil")
}

// OpenDB sizes the pool to the slots; Check finds a pool smaller than
// them, naming both numbers; the DSN-style Driver works through sql.Open.
func TestPoolSizing(t *testing.T) {
	g, err := executor.NewGroup(executor.GroupConfig{
		Default: supplierConfig(2),
		Suppliers: map[string]executor.Config{
			"orders":  supplierConfig(5),
			"catalog": {Slots: 3, Queue: 2, InvocationTimeout: time.Second, Breaker: breaker.Config{ResetTimeout: 3 * time.Second}},
		},
	})
	require.NoError(t, err)
	defer g.Close(context.Background())
	c, err := fusesql.Wrap(base(t), fusesql.Config{Group: g, Default: "orders", Suppliers: []string{"catalog"}})
	require.NoError(t, err)
	assert.Equal(t, 5+3+2, c.Connections(), "workers and queue places of every supplier")
	db := c.OpenDB()
	defer db.Close()
	assert.Equal(t, 10, db.Stats().MaxOpenConnections)
	require.NoError(t, fusesql.Check(db))
	db.SetMaxOpenConns(9)
	err = fusesql.Check(db)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "may open 9 connections")
	assert.Contains(t, err.Error(), "may hold 10")
	db.SetMaxOpenConns(0)
	assert.NoError(t, fusesql.Check(db), "an unlimited pool never makes a caller wait")

	assert.Error(t, fusesql.Check(plainDB(t, 1)), "a pool without fusesql")

	d, err := fusesql.WrapDriver(base(t).Driver(), fusesql.Config{Group: g, Default: "catalog"})
	require.NoError(t, err)
	name := fmt.Sprintf("pgx+fusesql-test-%d", registered.Add(1)) // a name per run: -count registers again
	sql.Register(name, d)
	sdb, err := sql.Open(name, pg.DSN())
	require.NoError(t, err)
	defer sdb.Close()
	var v int
	require.NoError(t, sdb.QueryRow("SELECT 9").Scan(&v))
	assert.Equal(t, 9, v)
	assert.NoError(t, fusesql.Check(sdb), "sql.Open's pool is unlimited")
	sdb.SetMaxOpenConns(2)
	assert.ErrorContains(t, fusesql.Check(sdb), "the slots of catalog may hold 5")
}

// registered numbers the drivers TestPoolSizing registers, which
// database/sql keeps for the life of the process.
var registered atomic.Int64

// A Classify that ends its goroutine (runtime.Goexit, as t.FailNow does)
// never returns a verdict: the call's slot is given back all the same, the
// call counted as a panic, a *breaker.PanicError naming Config.Classify,
// and the Goexit goes on. Classify runs when a call returns (an Exec) and
// when rows end (a query).
func TestClassifyGoexitGivesTheSlotBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var goexit atomic.Bool
		classify := func(err error) error {
			if goexit.Load() {
				runtime.Goexit()
			}
			return fusesql.DefaultClassify(err)
		}
		db, g := fakeDB(t, fakeConfig(), &fakeFuncs{}, fusesql.Config{Classify: classify})
		ctx := context.Background()
		require.NoError(t, db.PingContext(ctx)) // the dial, with a Classify that returns
		goexit.Store(true)
		calls := map[string]func(){
			"exec": func() { _, _ = db.ExecContext(ctx, "UPDATE t") },
			"query": func() {
				var v int
				_ = db.QueryRowContext(ctx, "SELECT 1").Scan(&v)
			},
		}
		for name, call := range calls {
			returned := false
			done := make(chan struct{})
			go func() {
				defer close(done)
				call()
				returned = true
			}()
			<-done
			assert.False(t, returned, "%s: the Goexit went on", name)
			st := dbStats(t, g)
			assert.Zero(t, st.InUse, "%s: the slot is given back", name)
		}
		st := dbStats(t, g)
		assert.EqualValues(t, 2, st.Panics, "each counted as a panic")
		assert.EqualValues(t, 2, st.Failures)
	})
}

// Config.Key runs on the caller's goroutine, with the caller's context,
// once database/sql has handed the call its connection and before the
// call takes a slot (as Config.Key documents): while it runs, the pool
// connection is in use and no slot is held.
func TestKeyRunsBeforeTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type callerKey struct{}
		var (
			db           *sql.DB
			g            *executor.Group
			inUse, busy  = -1, -1
			callersValue any
		)
		key := func(ctx context.Context, q string) string {
			if q != "" { // not the dial
				inUse, busy = db.Stats().InUse, dbStats(t, g).InUse
				callersValue = ctx.Value(callerKey{})
			}
			return ""
		}
		db, g = fakeDB(t, fakeConfig(), &fakeFuncs{}, fusesql.Config{Key: key})
		_, err := db.ExecContext(context.WithValue(context.Background(), callerKey{}, "caller"), "DELETE FROM t")
		require.NoError(t, err)
		assert.Equal(t, 1, inUse, "the call's pool connection is handed out")
		assert.Zero(t, busy, "no slot is held yet")
		assert.Equal(t, "caller", callersValue, "Key sees the caller's context")
	})
}
