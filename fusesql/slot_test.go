package fusesql_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	busy := func() int { return s.stats(t, "db").Busy }

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
	cfg := supplierConfig(2)
	cfg.InvocationTimeout = 300 * time.Millisecond
	cfg.Breaker.ResetTimeout = time.Second
	s := newShop(t, map[string]executor.Config{"db": cfg}, fusesql.Config{})
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
	tx.Rollback()
	s.released(t, "db")
	assert.GreaterOrEqual(t, s.stats(t, "db").Timeouts, uint64(2))
}
