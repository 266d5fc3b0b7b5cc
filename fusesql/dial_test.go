package fusesql_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

// dialCounter is a connector that counts the dials of the one it wraps.
type dialCounter struct {
	driver.Connector
	n atomic.Int32
}

func (c *dialCounter) Connect(ctx context.Context) (driver.Conn, error) {
	c.n.Add(1)
	return c.Connector.Connect(ctx)
}

// The orders table is locked; two writes fill the orders slots and time
// out, which opens the breaker (two failures in a row) and breaks their
// connections (pgx closes a connection whose read its deadline cut). After
// the reset timeout one more write is admitted: the session reset finds
// each pooled connection dead (recorded as ignored), and database/sql
// dials a new one under the write's context. The dial succeeds, but it is
// not the probe: the write is, and it times out on the lock, so the
// breaker re-opens (probe-failed) instead of closing while the table is
// still locked.
func TestADialIsNotTheProbe(t *testing.T) {
	t.Parallel()
	orders := "orders_dialprobe"
	exec(t, "CREATE TABLE "+orders+" (id serial PRIMARY KEY, item text)")
	cfg := executor.Config{
		Slots:             2,
		InvocationTimeout: 500 * time.Millisecond,
		Breaker:           breaker.Config{ConsecutiveFailures: 2, ResetTimeout: time.Second},
	}
	dials := &dialCounter{Connector: base(t)}
	s := newShopOver(t, dials, map[string]executor.Config{"orders": cfg}, fusesql.Config{})

	locker := plainDB(t, 1)
	tx, err := locker.Begin()
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	_, err = tx.Exec("LOCK TABLE " + orders + " IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	write := func() error {
		ctx, cancel := context.WithTimeout(fusesql.WithSupplier(context.Background(), "orders"), 10*time.Second)
		defer cancel()
		_, err := s.db.ExecContext(ctx, "INSERT INTO "+orders+" (item) VALUES ('book')")
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = write() })
	}
	wg.Wait()
	for i, err := range errs {
		require.ErrorIs(t, err, executor.ErrTimeout, "stuck write %d", i)
	}
	open, ok := firstTransition(s.rec.Events(), "orders", breaker.Open)
	require.True(t, ok, "the two timeouts open the breaker")
	assert.Equal(t, breaker.ConsecutiveFailures, open.Reason)

	// The open period ends; the next write is admitted in half-open.
	time.Sleep(time.Until(s.stats(t, "orders").Breaker.OpenUntil))
	before := dials.n.Load()
	err = write()
	require.ErrorIs(t, err, executor.ErrTimeout, "the write after the reset timeout still hangs on the lock")
	require.Equal(t, before+1, dials.n.Load(), "no pooled connection was alive: the write dialled one")

	_, closed := firstTransition(s.rec.Events(), "orders", breaker.Closed)
	assert.False(t, closed, "the breaker never closed while the table was locked")
	all := s.rec.Events()
	last := all[len(all)-1]
	assert.Equal(t, breaker.HalfOpen, last.From, "the last transition leaves half-open")
	assert.Equal(t, breaker.Open, last.To, "the failed probe re-opens the breaker")
	assert.Equal(t, breaker.ProbeFailed, last.Reason)

	require.NoError(t, tx.Rollback())
	s.released(t, "orders")
}

// A dial that takes long (a TCP and TLS handshake, authentication) says
// nothing of how long the supplier's statements take: dials are recorded
// as ignored, so the latency history, which the stuck criterion reads,
// holds the statements alone. The dials' durations show in
// Durations[breaker.Ignored]. A dial that fails still counts as a failure.
func TestDialsStayOutOfTheLatencyHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var refuse atomic.Bool
		f := &fakeFuncs{connect: func(ctx context.Context) error {
			if refuse.Load() {
				return syscall.ECONNREFUSED
			}
			select {
			case <-time.After(300 * time.Millisecond):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}}
		db, g := fakeDB(t, fakeConfig(), f, fusesql.Config{})
		db.SetMaxIdleConns(0) // every call dials a connection of its own
		ctx := context.Background()
		const calls = 40
		for range calls {
			var v int
			require.NoError(t, db.QueryRowContext(ctx, "SELECT 1").Scan(&v))
		}
		st := dbStats(t, g)
		assert.EqualValues(t, calls, st.Durations[breaker.Success].Count, "the statements are the successes")
		assert.EqualValues(t, calls, st.Durations[breaker.Ignored].Count, "the dials are ignored")
		assert.Equal(t, 300*time.Millisecond, st.Durations[breaker.Ignored].Sum/calls, "each dial took 300 ms")
		assert.Less(t, st.LatencyP99, time.Millisecond, "got p99 %v, want the statements' (instant) alone", st.LatencyP99)
		assert.Equal(t, breaker.Closed, st.Breaker.State)

		refuse.Store(true)
		for range 5 {
			var v int
			err := db.QueryRowContext(ctx, "SELECT 1").Scan(&v)
			require.True(t, errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, driver.ErrBadConn), "got %v", err)
		}
		st = dbStats(t, g)
		assert.Equal(t, breaker.Open, st.Breaker.State, "refused dials open the breaker")
		assert.Equal(t, breaker.ConsecutiveFailures, st.Breaker.Reason)
	})
}
