package fusepgx_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusepgx"
	"github.com/fusebox-go/fusebox/internal/testport"
)

// closedPort is a port of 127.0.0.1 where nothing listens.
func closedPort(t testing.TB) int {
	t.Helper()
	port, err := testport.Free()
	require.NoError(t, err)
	return port
}

// Rows hold their slot and connection until they are closed, or read to
// the end, or until the Next that meets an error; a second Close changes
// nothing.
func TestRowsHoldTheirSlotUntilTheyEnd(t *testing.T) {
	t.Parallel()
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(4)}, fusepgx.Config{})
	ctx := context.Background()

	for _, tc := range []struct {
		name string
		end  func(t *testing.T, r pgx.Rows)
	}{
		{"closed after one row", func(t *testing.T, r pgx.Rows) { require.True(t, r.Next()); r.Close() }},
		{"read to the end", func(t *testing.T, r pgx.Rows) {
			n := 0
			for r.Next() {
				n++
			}
			assert.Equal(t, 3, n)
		}},
		{"closed before any row", func(t *testing.T, r pgx.Rows) { r.Close(); r.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.p.Query(ctx, "SELECT generate_series(1, 3)")
			require.NoError(t, err)
			assert.Equal(t, 1, s.stats(t, "db").InUse, "the open rows hold a slot")
			assert.EqualValues(t, 1, s.p.Pgx().Stat().AcquiredConns(), "and a connection")
			tc.end(t, r)
			require.NoError(t, r.Err())
			assert.Zero(t, s.stats(t, "db").InUse, "given back when the rows end, before the call returns")
			assert.Zero(t, s.p.Pgx().Stat().AcquiredConns())
		})
	}

	t.Run("an error met by Next", func(t *testing.T) {
		before := s.stats(t, "db").Failures
		r, err := s.p.Query(ctx, "SELECT 1 / (3 - i) FROM generate_series(1, 5) i")
		require.NoError(t, err)
		for r.Next() {
		}
		var pgErr *pgconn.PgError
		require.ErrorAs(t, r.Err(), &pgErr)
		assert.Equal(t, "22012", pgErr.Code, "division by zero")
		assert.Zero(t, s.stats(t, "db").InUse)
		assert.Equal(t, before, s.stats(t, "db").Failures, "a data exception is an answer")
	})

	t.Run("QueryRow until Scan", func(t *testing.T) {
		row := s.p.QueryRow(ctx, "SELECT 41 + 1")
		assert.Equal(t, 1, s.stats(t, "db").InUse)
		var n int
		require.NoError(t, row.Scan(&n))
		assert.Equal(t, 42, n)
		assert.Zero(t, s.stats(t, "db").InUse)
		err := s.p.QueryRow(ctx, "SELECT 1 WHERE false").Scan(&n)
		assert.ErrorIs(t, err, pgx.ErrNoRows)
		assert.Zero(t, s.stats(t, "db").InUse)
	})

	t.Run("a Scan into the wrong type ends the rows as an answer", func(t *testing.T) {
		before := s.stats(t, "db")
		var b bool
		err := s.p.QueryRow(ctx, "SELECT 'x'::text").Scan(&b)
		require.Error(t, err)
		after := s.stats(t, "db")
		assert.Zero(t, after.InUse)
		assert.Equal(t, before.Failures, after.Failures, "the server answered")
	})
}

// A transaction holds one slot and one connection from Begin to Commit
// or Rollback; its statements run under it, so a supplier of one slot
// runs a whole transaction while a second caller is refused.
func TestTransactionsHoldTheirSlotUntilTheyEnd(t *testing.T) {
	t.Parallel()
	exec(t, "CREATE TABLE tx_slot (id int)")
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(1)}, fusepgx.Config{})
	ctx := context.Background()

	for _, commit := range []bool{true, false} {
		tx, err := s.p.Begin(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, s.stats(t, "db").InUse)
		_, err = s.p.Exec(ctx, "SELECT 1")
		assert.True(t, errors.Is(err, executor.ErrBusy) || errors.Is(err, executor.ErrSaturated), "the transaction holds the only slot: %v", err)
		_, err = tx.Exec(ctx, "INSERT INTO tx_slot VALUES (1)")
		require.NoError(t, err)
		var n int
		require.NoError(t, tx.QueryRow(ctx, "SELECT count(*) FROM tx_slot").Scan(&n))
		r, err := tx.Query(ctx, "SELECT generate_series(1, 3)")
		require.NoError(t, err)
		r.Close()
		sp, err := tx.Begin(ctx) // a savepoint
		require.NoError(t, err)
		require.NoError(t, sp.Rollback(ctx))
		assert.Equal(t, 1, s.stats(t, "db").InUse, "a savepoint's end is not the transaction's")
		if commit {
			require.NoError(t, tx.Commit(ctx))
		} else {
			require.NoError(t, tx.Rollback(ctx))
		}
		assert.Zero(t, s.stats(t, "db").InUse)
		assert.Zero(t, s.p.Pgx().Stat().AcquiredConns())
		assert.ErrorIs(t, tx.Rollback(ctx), pgx.ErrTxClosed, "a deferred Rollback after the end")
		assert.Zero(t, s.stats(t, "db").InUse)
	}
	var n int
	require.NoError(t, s.p.QueryRow(ctx, "SELECT count(*) FROM tx_slot").Scan(&n))
	assert.Equal(t, 1, n, "the committed row only")
}

// A transaction whose invocation deadline passes is ended: the timeout is
// recorded at the deadline, the statement running then fails with
// executor.ErrTimeout, and the transaction's next call (at once: judged by
// the clock, not only by the executor's timer) rolls it back and gives the
// slot and the connection back.
func TestATransactionPastItsDeadlineIsEnded(t *testing.T) {
	t.Parallel()
	cfg := executor.Config{Slots: 2, InvocationTimeout: 500 * time.Millisecond, Breaker: breaker.Config{ResetTimeout: time.Second}}
	s := newShop(t, map[string]executor.Config{"db": cfg}, fusepgx.Config{})
	ctx := context.Background()

	tx, err := s.p.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "SELECT pg_sleep(2)")
	require.ErrorIs(t, err, executor.ErrTimeout, "the statement ends at the transaction's deadline")
	// The statement's context ends at the deadline, the executor's timer
	// a moment later: it records the timeout.
	eventually(t, "the timeout is recorded", func() bool { return s.stats(t, "db").Timeouts == 1 })
	assert.Equal(t, 1, s.stats(t, "db").InUse, "the slot stays held until the transaction ends")
	_, err = tx.Exec(ctx, "SELECT 1")
	require.ErrorIs(t, err, executor.ErrTimeout)
	assert.ErrorIs(t, err, pgx.ErrTxClosed)
	s.released(t, "db")
	assert.ErrorIs(t, tx.Commit(ctx), pgx.ErrTxClosed)

	// Idle past its deadline: the next call ends it too.
	tx, err = s.p.Begin(ctx)
	require.NoError(t, err)
	eventually(t, "the deadline passes", func() bool { return s.stats(t, "db").Timeouts == 2 })
	assert.ErrorIs(t, tx.Commit(ctx), executor.ErrTimeout)
	s.released(t, "db")
}

// A transaction whose Begin context is cancelled is rolled back by its
// next call and recorded as the caller's cancellation (ignored), not as
// whatever Config.Classify says of context.Canceled: here one that calls
// it an answer, which would have counted a success.
func TestACancelledTransactionIsIgnoredWhateverClassifySays(t *testing.T) {
	t.Parallel()
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(2)}, fusepgx.Config{
		Classify: func(err error) error {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return fusepgx.DefaultClassify(err)
		},
	})
	s.warm(t, "db", 1)
	ctx, cancel := context.WithCancel(context.Background())
	tx, err := s.p.Begin(ctx)
	require.NoError(t, err)
	before := s.stats(t, "db")
	cancel()
	_, err = tx.Exec(context.Background(), "SELECT 1")
	require.ErrorIs(t, err, pgx.ErrTxClosed)
	assert.ErrorIs(t, err, context.Canceled)
	after := s.stats(t, "db")
	assert.Equal(t, before.Successes, after.Successes, "a cancelled transaction is no success")
	assert.Equal(t, before.Cancelled+1, after.Cancelled)
	assert.Equal(t, before.Ignored+1, after.Ignored)
	s.released(t, "db")
}

// A batch holds one slot and connection until its results are closed.
func TestBatchesHoldTheirSlotUntilClosed(t *testing.T) {
	t.Parallel()
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(2)}, fusepgx.Config{})
	ctx := context.Background()
	b := &pgx.Batch{}
	b.Queue("SELECT 1")
	b.Queue("SELECT generate_series(1, 3)")
	b.Queue("SELECT 1/0")
	br := s.p.SendBatch(ctx, b)
	assert.Equal(t, 1, s.stats(t, "db").InUse)
	_, err := br.Exec()
	require.NoError(t, err)
	r, err := br.Query()
	require.NoError(t, err)
	r.Close()
	assert.Equal(t, 1, s.stats(t, "db").InUse)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, br.Close(), &pgErr)
	assert.Zero(t, s.stats(t, "db").InUse)
	assert.Zero(t, s.p.Pgx().Stat().AcquiredConns())
	assert.Zero(t, s.stats(t, "db").Failures, "a division by zero is an answer")
}

// Errors are classified by SQLSTATE as fusesql's are: the call's mistakes
// are answers, the database's trouble failures; the caller's own
// cancellation is ignored.
func TestClassification(t *testing.T) {
	t.Parallel()
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(4)}, fusepgx.Config{})
	ctx := context.Background()
	for _, tc := range []struct {
		name, sql string
		outcome   string
	}{
		{"a syntax error is an answer", "SELEC 1", "success"},
		{"a division by zero is an answer", "SELECT 1/0", "success"},
		{"a cancelled statement is a failure", "SELECT pg_cancel_backend(pg_backend_pid()), pg_sleep(1)", "failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.stats(t, "db")
			_, err := s.p.Exec(ctx, tc.sql)
			require.Error(t, err)
			after := s.stats(t, "db")
			switch tc.outcome {
			case "success":
				assert.Equal(t, before.Successes+1, after.Successes)
			case "failure":
				assert.Equal(t, before.Failures+1, after.Failures)
			}
		})
	}
	t.Run("the caller's own cancellation is ignored", func(t *testing.T) {
		before := s.stats(t, "db")
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := s.p.Exec(cctx, "SELECT pg_sleep(5)")
		require.Error(t, err)
		assert.NotErrorIs(t, err, executor.ErrTimeout)
		after := s.stats(t, "db")
		assert.Equal(t, before.Failures, after.Failures)
		assert.Equal(t, before.Ignored+1, after.Ignored)
	})
	t.Run("the invocation timeout is the supplier's failure", func(t *testing.T) {
		before := s.stats(t, "db")
		_, err := s.p.Exec(ctx, "SELECT pg_sleep(5)")
		require.ErrorIs(t, err, executor.ErrTimeout)
		after := s.stats(t, "db")
		assert.Equal(t, before.Timeouts+1, after.Timeouts)
		assert.Equal(t, before.Failures+1, after.Failures)
	})
	t.Run("the caller's own deadline is not wrapped", func(t *testing.T) {
		dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err := s.p.Exec(dctx, "SELECT pg_sleep(5)")
		require.Error(t, err)
		assert.True(t, errors.Is(err, context.DeadlineExceeded) || dctx.Err() != nil)
	})
	s.released(t, "db")
}
