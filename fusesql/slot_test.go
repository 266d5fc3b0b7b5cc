package fusesql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

// A query holds its slot until its rows are closed or read to the end, a
// transaction from BeginTx until Commit or Rollback, an Exec until it
// returns; and the slot is free when that call returns.
func TestSlotHeldWhileTheDatabaseIsBusy(t *testing.T) {
	t.Parallel()
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(4)}, fusesql.Config{})
	ctx := context.Background()
	busy := func() int { return s.stats(t, "db").InUse }

	t.Run("rows until Close", func(t *testing.T) {
		rows, err := s.db.QueryContext(ctx, "SELECT generate_series(1, 10)")
		require.NoError(t, err)
		require.True(t, rows.Next())
		assert.Equal(t, 1, busy(), "open rows hold the slot")
		require.NoError(t, rows.Close())
		assert.Zero(t, busy(), "Close gave it back before returning")
	})
	t.Run("rows until read to the end", func(t *testing.T) {
		rows, err := s.db.QueryContext(ctx, "SELECT generate_series(1, 3)")
		require.NoError(t, err)
		n := 0
		for rows.Next() {
			n++
			assert.Equal(t, 1, busy())
		}
		require.NoError(t, rows.Err())
		assert.Equal(t, 3, n)
		assert.Zero(t, busy(), "the last Next gave it back")
	})
	t.Run("QueryRow until Scan", func(t *testing.T) {
		var v int
		require.NoError(t, s.db.QueryRowContext(ctx, "SELECT 7").Scan(&v))
		assert.Equal(t, 7, v)
		assert.Zero(t, busy())
	})
	t.Run("a transaction until Commit", func(t *testing.T) {
		tx, err := s.db.BeginTx(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, 1, busy())
		var v int
		require.NoError(t, tx.QueryRowContext(ctx, "SELECT 1").Scan(&v))
		_, err = tx.ExecContext(ctx, "SELECT 2")
		require.NoError(t, err)
		st, err := tx.PrepareContext(ctx, "SELECT $1::int")
		require.NoError(t, err)
		require.NoError(t, st.QueryRowContext(ctx, 5).Scan(&v))
		assert.Equal(t, 5, v)
		assert.Equal(t, 1, busy(), "statements in a transaction use its slot")
		require.NoError(t, tx.Commit())
		assert.Zero(t, busy())
	})
	t.Run("a transaction until Rollback", func(t *testing.T) {
		tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		require.NoError(t, err)
		assert.Equal(t, 1, busy())
		require.NoError(t, tx.Rollback())
		assert.Zero(t, busy())
	})
	t.Run("prepared statements outside a transaction", func(t *testing.T) {
		st, err := s.db.PrepareContext(ctx, "SELECT $1::int + 1")
		require.NoError(t, err)
		defer st.Close()
		var v int
		require.NoError(t, st.QueryRowContext(ctx, 41).Scan(&v))
		assert.Equal(t, 42, v)
		_, err = st.ExecContext(ctx, 1)
		require.NoError(t, err)
		assert.Zero(t, busy())
	})
	t.Run("an Exec while it runs", func(t *testing.T) {
		done := make(chan error, 1)
		go func() {
			_, err := s.db.ExecContext(ctx, "SELECT pg_sleep(1)")
			done <- err
		}()
		eventually(t, "the Exec holds a slot", func() bool { return busy() == 1 })
		require.NoError(t, <-done)
		assert.Zero(t, busy())
	})
	t.Run("Ping", func(t *testing.T) {
		require.NoError(t, s.db.PingContext(ctx))
		assert.Zero(t, busy())
	})
	s.released(t, "db")
	st := s.stats(t, "db")
	assert.Zero(t, st.Failures, "nothing failed")
	assert.Positive(t, st.Successes)
}

// The invocation timeout bounds a call: a query the database does not
// answer ends at the supplier's deadline with an error matching
// executor.ErrTimeout, and a caller's own, earlier deadline is the
// caller's error.
func TestInvocationTimeoutEndsTheCall(t *testing.T) {
	t.Parallel()
	// The tests' usual 2 s invocation timeout, not a shorter one: the
	// statements cut off below close their connections, so BeginTx dials
	// a new one under its own invocation deadline, and a loaded machine
	// has taken more than 300 ms to connect.
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(2)}, fusesql.Config{})
	start := time.Now()
	_, err := s.db.ExecContext(context.Background(), "SELECT pg_sleep(10)")
	assert.ErrorIs(t, err, executor.ErrTimeout)
	assert.Less(t, time.Since(start), 5*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = s.db.ExecContext(ctx, "SELECT pg_sleep(10)")
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	tx, err := s.db.BeginTx(context.Background(), nil)
	require.NoError(t, err)
	_, err = tx.Exec("SELECT pg_sleep(10)")
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the transaction's deadline bounds its statements")
	assert.ErrorIs(t, err, executor.ErrTimeout, "and is the invocation timeout")
	tx.Rollback()
	s.released(t, "db")
	assert.GreaterOrEqual(t, s.stats(t, "db").Timeouts, uint64(2))
}

// A driver that answers a query or an Exec with arguments driver.ErrSkip
// (go-sql-driver/mysql does without interpolateParams) has sent nothing:
// database/sql prepares the statement and runs it instead, and gets its
// result. The skipped try gives its slot back recorded as ignored, neither
// a failure nor a success.
func TestErrSkipIsIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		skip := &fakeFuncs{
			query: func(context.Context, string, []driver.NamedValue) (driver.Rows, error) { return nil, driver.ErrSkip },
			exec:  func(context.Context, string, []driver.NamedValue) (driver.Result, error) { return nil, driver.ErrSkip },
		}
		cfg := fakeConfig()
		cfg.Breaker.ConsecutiveFailures = 1
		db, g := fakeDB(t, cfg, skip, fusesql.Config{})
		ctx := context.Background()
		require.NoError(t, db.PingContext(ctx)) // the dial
		before := dbStats(t, g)
		for range 3 {
			var v int
			require.NoError(t, db.QueryRowContext(ctx, "SELECT ?", 1).Scan(&v), "database/sql prepared the query")
			assert.Equal(t, 1, v)
			res, err := db.ExecContext(ctx, "UPDATE t SET v = ?", 1)
			require.NoError(t, err, "database/sql prepared the statement")
			n, _ := res.RowsAffected()
			assert.EqualValues(t, 1, n)
		}
		st := dbStats(t, g)
		assert.Zero(t, st.Failures, "a skipped try is no failure")
		assert.Equal(t, breaker.Closed, st.Breaker.State)
		assert.Equal(t, before.Ignored+6, st.Ignored, "each skipped try is ignored")
		assert.Equal(t, before.Successes+12, st.Successes, "each prepare and each execution is a call")
		assert.Zero(t, st.InUse)
	})
}

// A query holds its slot between its result sets and gives it back at the
// end of the last one.
func TestSlotHeldAcrossResultSets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sets := &fakeFuncs{query: func(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
			return &fakeRows{sets: [][]int64{{1, 2}, {3}}}, nil
		}}
		db, g := fakeDB(t, fakeConfig(), sets, fusesql.Config{})
		rows, err := db.QueryContext(context.Background(), "CALL two_sets()")
		require.NoError(t, err)
		var got []int
		for rows.Next() {
			var v int
			require.NoError(t, rows.Scan(&v))
			got = append(got, v)
		}
		assert.Equal(t, 1, dbStats(t, g).InUse, "held between the result sets")
		require.True(t, rows.NextResultSet())
		for rows.Next() {
			var v int
			require.NoError(t, rows.Scan(&v))
			got = append(got, v)
		}
		require.NoError(t, rows.Err())
		assert.Equal(t, []int{1, 2, 3}, got)
		assert.Zero(t, dbStats(t, g).InUse, "given back at the end of the last set")
		assert.False(t, rows.NextResultSet())
		require.NoError(t, rows.Close())
		st := dbStats(t, g)
		assert.Zero(t, st.InUse)
		assert.Zero(t, st.Failures)
	})
}

// The caller who cancels while reading rows gets its cancellation; the
// slot is given back, and nothing counts against the database.
func TestCallerCancellingMidScanIsNoFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var vals []int64
		for i := range 100 {
			vals = append(vals, int64(i))
		}
		endless := &fakeFuncs{query: func(ctx context.Context, _ string, _ []driver.NamedValue) (driver.Rows, error) {
			return &fakeRows{sets: [][]int64{vals}, ctx: ctx}, nil
		}}
		db, g := fakeDB(t, fakeConfig(), endless, fusesql.Config{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rows, err := db.QueryContext(ctx, "SELECT v FROM big")
		require.NoError(t, err)
		n := 0
		for rows.Next() {
			if n++; n == 10 {
				cancel()
				synctest.Wait() // database/sql closes the rows on the cancellation
			}
		}
		assert.ErrorIs(t, rows.Err(), context.Canceled)
		require.NoError(t, rows.Close())
		st := dbStats(t, g)
		assert.Zero(t, st.InUse)
		assert.Zero(t, st.Failures)
		assert.Less(t, n, 100, "the scan ended at the cancellation")
	})
}

// A statement prepared on the pool runs under a slot of its own outside a
// transaction and under the transaction's in one (Tx.StmtContext), and
// fails once the transaction is over.
func TestPreparedStatementInAndOutOfATransaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, g := fakeDB(t, fakeConfig(), &fakeFuncs{}, fusesql.Config{})
		ctx := context.Background()
		st, err := db.PrepareContext(ctx, "UPDATE t")
		require.NoError(t, err)
		defer st.Close()
		_, err = st.ExecContext(ctx)
		require.NoError(t, err)
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		ts := tx.StmtContext(ctx, st)
		_, err = ts.ExecContext(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, dbStats(t, g).InUse, "the statement in the transaction runs under its slot")
		_, err = st.ExecContext(ctx) // on the other connection meanwhile
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
		assert.ErrorIs(t, tx.Commit(), sql.ErrTxDone)
		_, err = ts.ExecContext(ctx)
		assert.Error(t, err, "the transaction's statement is closed with it")
		stats := dbStats(t, g)
		assert.Zero(t, stats.InUse)
		assert.Zero(t, stats.Failures)
	})
}

// A statement in a transaction that runs into the transaction's deadline,
// the supplier's invocation timeout, gets executor.ErrTimeout, as the same
// statement outside a transaction does: an Exec, a query, a prepare, a
// prepared statement's Exec and query (whose fake driver checks its
// context before it answers, as pgx does). A deadline of the caller's own,
// earlier, stays the caller's.
func TestTransactionStatementTimeoutIsErrTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := &fakeFuncs{
			query: func(ctx context.Context, _ string, _ []driver.NamedValue) (driver.Rows, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			},
			exec: func(ctx context.Context, _ string, _ []driver.NamedValue) (driver.Result, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			},
		}
		cfg := fakeConfig()
		cfg.Breaker.ConsecutiveFailures = 10 // open, it would refuse the transactions
		db, g := fakeDB(t, cfg, hang, fusesql.Config{})
		ctx := context.Background()
		_, err := db.ExecContext(ctx, "UPDATE t")
		require.ErrorIs(t, err, executor.ErrTimeout, "outside a transaction")

		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_, err = tx.ExecContext(short, "UPDATE t")
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, executor.ErrTimeout, "the caller's own deadline")
		_, err = tx.ExecContext(ctx, "UPDATE t")
		assert.ErrorIs(t, err, executor.ErrTimeout, "an Exec in a transaction")
		assert.ErrorIs(t, err, context.DeadlineExceeded, "the driver's error stays in the chain")
		require.NoError(t, tx.Rollback())

		stmts := []struct {
			name string
			run  func(tx *sql.Tx) error
		}{
			{"a query", func(tx *sql.Tx) error {
				_, err := tx.QueryContext(ctx, "SELECT 1")
				return err
			}},
			{"a prepared statement's Exec", func(tx *sql.Tx) error {
				st, err := tx.PrepareContext(ctx, "UPDATE t")
				require.NoError(t, err)
				time.Sleep(time.Second + time.Millisecond) // the bubble's clock: past the transaction's deadline
				_, err = st.ExecContext(ctx)
				return err
			}},
			{"a prepared statement's query", func(tx *sql.Tx) error {
				st, err := tx.PrepareContext(ctx, "SELECT 1")
				require.NoError(t, err)
				time.Sleep(time.Second + time.Millisecond)
				_, err = st.QueryContext(ctx)
				return err
			}},
			{"a prepare", func(tx *sql.Tx) error {
				time.Sleep(time.Second + time.Millisecond)
				_, err := tx.PrepareContext(ctx, "SELECT 1")
				return err
			}},
		}
		for _, stmt := range stmts {
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			assert.ErrorIs(t, stmt.run(tx), executor.ErrTimeout, stmt.name)
			_ = tx.Rollback()
		}
		assert.Zero(t, dbStats(t, g).InUse)
	})
}

// Rows still being read when the invocation timeout passes: the driver's
// error reaches the caller (Rows.Err) as executor.ErrTimeout, as a query
// that timed out before its first row does.
func TestRowsTimeoutIsErrTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := &fakeFuncs{query: func(ctx context.Context, _ string, _ []driver.NamedValue) (driver.Rows, error) {
			return &fakeRows{sets: [][]int64{{1, 2, 3}}, ctx: ctx}, nil
		}}
		db, g := fakeDB(t, fakeConfig(), slow, fusesql.Config{})
		for _, inTx := range []bool{false, true} {
			var q interface {
				QueryContext(context.Context, string, ...any) (*sql.Rows, error)
			} = db
			var tx *sql.Tx
			if inTx {
				var err error
				tx, err = db.BeginTx(context.Background(), nil)
				require.NoError(t, err)
				q = tx
			}
			rows, err := q.QueryContext(context.Background(), "SELECT v FROM big")
			require.NoError(t, err)
			require.True(t, rows.Next())
			time.Sleep(time.Second + time.Millisecond) // the bubble's clock: past the deadline
			assert.False(t, rows.Next())
			err = rows.Err()
			assert.ErrorIs(t, err, executor.ErrTimeout, "in a transaction: %v", inTx)
			assert.ErrorIs(t, err, context.DeadlineExceeded, "the driver's error stays in the chain")
			require.NoError(t, rows.Close())
			if tx != nil {
				_ = tx.Rollback()
			}
		}
		st := dbStats(t, g)
		assert.Zero(t, st.InUse)
		assert.EqualValues(t, 2, st.Timeouts)
	})
}

// The driver watches the caller's own context when the caller's deadline
// comes at or before the invocation deadline: that context ends the call
// when the lease's would, and the driver needs no new one. A later
// deadline, or none, gets the lease's context, which ends at the
// invocation deadline. Either way a hung call ends at the earlier
// deadline, with the caller's error for the caller's own.
func TestDriverWatchesTheCallersContextWhenItsDeadlineComesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got context.Context
		hang := &fakeFuncs{exec: func(ctx context.Context, _ string, _ []driver.NamedValue) (driver.Result, error) {
			got = ctx
			<-ctx.Done()
			return nil, ctx.Err()
		}}
		db, g := fakeDB(t, fakeConfig(), hang, fusesql.Config{}) // 1 s invocation timeout
		for _, c := range []struct {
			name     string
			deadline time.Duration // the caller's; 0: none
			same     bool          // the driver gets the caller's context
			ends     time.Duration
			timeout  bool // the error matches executor.ErrTimeout
		}{
			{"a caller's deadline before the invocation deadline", 100 * time.Millisecond, true, 100 * time.Millisecond, false},
			{"a caller's deadline at the invocation deadline", time.Second, true, time.Second, false},
			{"a caller's deadline after the invocation deadline", time.Hour, false, time.Second, true},
			{"no deadline of the caller's", 0, false, time.Second, true},
			// A context that cannot end (a nil Done) gets the lease's.
			{"a deadline without a Done channel", -100 * time.Millisecond, false, 100 * time.Millisecond, false},
		} {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			switch {
			case c.deadline < 0:
				ctx = deadlineOnly{ctx, time.Now().Add(-c.deadline)}
			case c.deadline > 0:
				ctx, cancel = context.WithTimeout(ctx, c.deadline)
			}
			timeouts := dbStats(t, g).Timeouts
			start := time.Now()
			_, err := db.ExecContext(ctx, "UPDATE t")
			cancel()
			assert.Equal(t, c.ends, time.Since(start), "%s: the call ends at the earlier deadline", c.name)
			assert.ErrorIs(t, err, context.DeadlineExceeded, c.name)
			assert.Equal(t, c.timeout, errors.Is(err, executor.ErrTimeout), "%s: %v", c.name, err)
			if c.same {
				assert.True(t, got == ctx, "%s: the driver got %v, want the caller's context", c.name, got)
			} else {
				assert.False(t, got == ctx, "%s: the driver got the caller's context", c.name)
				d, ok := got.Deadline()
				assert.True(t, ok && d.Equal(start.Add(c.ends)), "%s: the driver's deadline %v, want the lease's %v", c.name, d, start.Add(c.ends))
			}
			synctest.Wait()
			st := dbStats(t, g)
			assert.Zero(t, st.InUse, c.name)
			assert.Equal(t, timeouts+1, st.Timeouts, "%s: the breaker records a timeout", c.name)
		}
	})
}

// deadlineOnly says it has a deadline but cannot end (a nil Done), as a
// context of a user's own type may.
type deadlineOnly struct {
	context.Context
	d time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.d, true }

// errBrokenRow is a driver's error that breaks rows mid-read, such as a
// value it cannot convert.
var errBrokenRow = errors.New("fake: cannot convert the row")

// brokenRows fail at their first row, and their Close reads the rest of
// the result, as pgx's does, until the query's context ends.
type brokenRows struct {
	fakeRows
	closing chan struct{}
}

func (r *brokenRows) Next([]driver.Value) error { return errBrokenRow }

func (r *brokenRows) Close() error {
	close(r.closing)
	<-r.ctx.Done()
	return nil
}

// Rows broken by an error keep their slot while the driver closes them:
// the driver may still read from the connection then, under whichever
// context it has (here the caller's, whose deadline comes first), and the
// slot is free once database/sql's Next, which closes them, returns. The
// error that broke them is the query's outcome, a failure.
func TestBrokenRowsHoldTheSlotWhileTheDriverClosesThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var br *brokenRows
		f := &fakeFuncs{query: func(ctx context.Context, _ string, _ []driver.NamedValue) (driver.Rows, error) {
			br = &brokenRows{fakeRows: fakeRows{ctx: ctx}, closing: make(chan struct{})}
			return br, nil
		}}
		db, g := fakeDB(t, fakeConfig(), f, fusesql.Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		rows, err := db.QueryContext(ctx, "SELECT v FROM t")
		require.NoError(t, err)
		start := time.Now()
		next := make(chan bool)
		go func() { next <- rows.Next() }()
		<-br.closing
		synctest.Wait()
		assert.Equal(t, 1, dbStats(t, g).InUse, "the driver is closing the rows: the slot is held")
		assert.False(t, <-next)
		assert.Equal(t, 500*time.Millisecond, time.Since(start), "the driver's Close ran until the caller's deadline")
		assert.Zero(t, dbStats(t, g).InUse, "the slot is free once Next returns")
		assert.ErrorIs(t, rows.Err(), errBrokenRow)
		synctest.Wait() // the deadline's own goroutine may still be recording
		assert.Equal(t, uint64(1), dbStats(t, g).Failures, "the broken rows are the query's failure")
		require.NoError(t, rows.Close())
	})
}
