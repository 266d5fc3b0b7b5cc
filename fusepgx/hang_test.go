package fusepgx_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusepgx"
)

// A second connection holds LOCK TABLE orders IN ACCESS EXCLUSIVE MODE,
// so every write to orders blocks. The orders slots fill with stuck
// writes; the write that finds them all stuck trips the orders breaker
// (reason saturation) about half a second in, and orders writes are
// refused at once from then on, naming the supplier, while catalog reads
// over the same pool keep being served. After the lock, every slot and
// connection is given back and the orders breaker closes.
func TestLockedTableTripsItsSupplierAlone(t *testing.T) {
	t.Parallel()
	orders, catalog := "orders_lock", "catalog_lock"
	exec(t, "CREATE TABLE "+orders+" (id serial PRIMARY KEY, item text)",
		"CREATE TABLE "+catalog+" (id int PRIMARY KEY, name text)",
		"INSERT INTO "+catalog+" SELECT i, 'item ' || i FROM generate_series(1, 100) i")
	s := newShop(t, map[string]executor.Config{"orders": supplierConfig(4), "catalog": supplierConfig(4)}, fusepgx.Config{Default: "catalog"})
	assert.Equal(t, 8, s.p.Connections())
	assert.EqualValues(t, 8, s.p.Pgx().Config().MaxConns, "New sizes the pool for the slots")
	s.warm(t, "orders", 4)
	s.warm(t, "catalog", 4)

	locker := connect(t)
	tx, err := locker.Begin(context.Background())
	require.NoError(t, err)
	_, err = tx.Exec(context.Background(), "LOCK TABLE "+orders+" IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)
	locked := time.Now()

	ordersCtx := fusepgx.WithSupplier(context.Background(), "orders")
	writes := startLoad(8, 20*time.Millisecond, 10*time.Second, func(ctx context.Context) error {
		_, err := s.p.Exec(fusepgx.WithSupplier(ctx, "orders"), "INSERT INTO "+orders+" (item) VALUES ('book')")
		return err
	})
	reads := startLoad(2, 5*time.Millisecond, 10*time.Second, func(ctx context.Context) error {
		var n int
		return s.p.QueryRow(ctx, "SELECT count(*) FROM "+catalog).Scan(&n)
	})

	eventually(t, "the orders breaker opens", func() bool { _, ok := s.ev.first("orders", breaker.Open); return ok })
	open, _ := s.ev.first("orders", breaker.Open)
	took := open.Time.Sub(locked)
	t.Logf("orders opened %v after the lock", took)
	assert.Equal(t, breaker.Saturation, open.Reason, "trip reason")
	assert.Less(t, took, 1900*time.Millisecond, "the breaker opens before the first 2 s timeout could count")

	// While the lock holds: refusals at once, and the catalog served.
	start := time.Now()
	_, err = s.p.Exec(ordersCtx, "INSERT INTO "+orders+" (item) VALUES ('pen')")
	require.Error(t, err)
	assert.Less(t, time.Since(start), time.Second, "a refusal waits for nothing")
	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.Contains(t, err.Error(), "orders", "the refusal names its supplier")
	assert.LessOrEqual(t, s.p.Pgx().Stat().AcquiredConns(), int32(8), "orders holds at most its slots' connections")
	reads.more(t, "catalog reads go on during the lock")
	_, _, readFailures := reads.counts()
	assert.Zero(t, readFailures, "no catalog read failed")

	require.NoError(t, tx.Rollback(context.Background()))
	writes.end()
	reads.end()
	_, readsRefused, _ := reads.counts()
	assert.Zero(t, readsRefused, "no catalog read was refused")
	assert.Less(t, reads.slowest, time.Second, "no catalog read waited for a connection")
	s.released(t, "orders", "catalog")
	assert.Equal(t, breaker.Closed, s.stats(t, "catalog").Breaker.State, "catalog never tripped")

	// The breaker closes after its reset timeout, on a probe.
	eventually(t, "the orders breaker closes", func() bool {
		_, err := s.p.Exec(ordersCtx, "INSERT INTO "+orders+" (item) VALUES ('probe')")
		return err == nil && s.stats(t, "orders").Breaker.State == breaker.Closed
	})
	s.released(t, "orders")
}

// The dial rule. The orders breaker is half-open, the pool holds no
// connection (pgxpool dials inside Acquire) and the table is still
// locked: the probe's dial succeeds, its INSERT blocks on the lock until
// the invocation timeout, and the probe fails (probe-failed). Had the
// dial's success counted as the probe's, the breaker would have closed
// on a database that still cannot take a write. With the lock gone, the
// next probe's call on a new connection decides nothing by its success
// (it holds the dial's time): the breaker stays half-open, and the call
// after it, on the connection now idle, closes it.
func TestADialNeverDecidesTheProbe(t *testing.T) {
	t.Parallel()
	orders := "orders_dial"
	exec(t, "CREATE TABLE "+orders+" (id serial PRIMARY KEY, item text)")
	cfg := executor.Config{Slots: 2, InvocationTimeout: time.Second, Breaker: breaker.Config{ResetTimeout: 1500 * time.Millisecond}}
	s := newShop(t, map[string]executor.Config{"orders": cfg}, fusepgx.Config{Default: "orders"})
	ctx := context.Background()
	insert := "INSERT INTO " + orders + " (item) VALUES ('book')"
	ex, _ := s.g.Lookup("orders")

	locker := connect(t)
	tx, err := locker.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "LOCK TABLE "+orders+" IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	// Open, and no connection in the pool.
	require.NoError(t, ex.Breaker().Trip(breaker.Manual))
	s.p.Pgx().Reset()
	eventually(t, "the pool is empty", func() bool { return s.p.Pgx().Stat().TotalConns() == 0 })
	mark := s.ev.len()
	eventually(t, "the reset timeout passes", func() bool { return time.Now().After(ex.Stats().Breaker.OpenUntil) })

	dialsBefore := s.p.Pgx().Stat().NewConnsCount()
	_, err = s.p.Exec(ctx, insert)
	require.ErrorIs(t, err, executor.ErrTimeout, "the probe's INSERT waits on the lock until the invocation timeout")
	assert.Equal(t, dialsBefore+1, s.p.Pgx().Stat().NewConnsCount(), "the probe dialed its connection")
	evs := s.ev.since("orders", mark)
	require.Len(t, evs, 2, "half-open, then open again: %v", evs)
	assert.Equal(t, breaker.HalfOpen, evs[0].To)
	assert.Equal(t, breaker.Open, evs[1].To, "the probe re-opens the breaker")
	assert.Equal(t, breaker.ProbeFailed, evs[1].Reason)

	// The lock ends; the pool is emptied again.
	require.NoError(t, tx.Rollback(ctx))
	s.released(t, "orders")
	s.p.Pgx().Reset()
	eventually(t, "the pool is empty", func() bool { return s.p.Pgx().Stat().TotalConns() == 0 })
	mark = s.ev.len()
	eventually(t, "the reset timeout passes", func() bool { return time.Now().After(ex.Stats().Breaker.OpenUntil) })
	ignored := ex.Stats().Ignored
	_, err = s.p.Exec(ctx, insert)
	require.NoError(t, err)
	assert.Equal(t, breaker.HalfOpen, ex.Stats().Breaker.State, "a probe on a new connection decides nothing by its success")
	assert.Equal(t, ignored+1, ex.Stats().Ignored, "it is recorded as ignored")
	_, err = s.p.Exec(ctx, insert)
	require.NoError(t, err)
	assert.Equal(t, breaker.Closed, ex.Stats().Breaker.State, "the next probe, on the connection now idle, closes the breaker")
	assert.Equal(t, 1, int(s.p.Pgx().Stat().TotalConns()), "both ran on the one connection")
	evs = s.ev.since("orders", mark)
	require.Len(t, evs, 2, "half-open, then closed: %v", evs)
	assert.Equal(t, breaker.Closed, evs[1].To)
}

// A failed dial (nothing listens) counts as the call's failure while the
// breaker is closed, so a database that is down trips its suppliers; while
// it is half-open, the dial decides nothing and the probe's place goes to
// the next caller, whatever the breaker's Classify says of the error (one
// that counts every error as a failure, context.Canceled included).
func TestAFailedDialCountsOnlyWhileClosed(t *testing.T) {
	t.Parallel()
	for name, classify := range map[string]func(error) breaker.Outcome{
		"with the default Classify":            nil,
		"with a Classify that ignores nothing": func(error) breaker.Outcome { return breaker.Failure },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := executor.Config{Slots: 2, InvocationTimeout: time.Second, Breaker: breaker.Config{
				ConsecutiveFailures: 2, ResetTimeout: 1500 * time.Millisecond, Classify: classify,
			}}
			g, err := executor.NewGroup(executor.GroupConfig{Suppliers: map[string]executor.Config{"db": cfg}, Strict: true})
			require.NoError(t, err)
			t.Cleanup(func() { g.Close(context.Background()) })
			pc := poolConfig(t)
			pc.ConnConfig.Port = uint16(closedPort(t))
			p, err := fusepgx.New(context.Background(), pc, fusepgx.Config{Group: g})
			require.NoError(t, err)
			t.Cleanup(p.Close)
			ex, _ := g.Lookup("db")

			for range 2 {
				_, err := p.Exec(context.Background(), "SELECT 1")
				require.Error(t, err)
				assert.NotErrorIs(t, err, breaker.ErrOpen)
			}
			assert.Equal(t, breaker.Open, ex.Stats().Breaker.State, "two failed dials trip the breaker")
			assert.EqualValues(t, 2, ex.Stats().Failures)

			eventually(t, "the reset timeout passes", func() bool { return time.Now().After(ex.Stats().Breaker.OpenUntil) })
			_, err = p.Exec(context.Background(), "SELECT 1")
			require.Error(t, err)
			assert.NotErrorIs(t, err, breaker.ErrOpen, "the probe was admitted")
			st := ex.Stats()
			assert.Equal(t, breaker.HalfOpen, st.Breaker.State, "the probe's failed dial decides nothing")
			assert.EqualValues(t, 2, st.Failures)
			assert.EqualValues(t, 1, st.Ignored)
		})
	}
}

// The first call on a new connection holds the dial's time: its success is
// recorded as ignored, with no latency sample, even under a breaker
// Classify that would count context.Canceled, or any error, as a failure.
// The next call on that connection is a success.
func TestAFreshConnectionsSuccessIsIgnoredWhateverClassifySays(t *testing.T) {
	t.Parallel()
	cfg := supplierConfig(1)
	cfg.Breaker.Classify = func(error) breaker.Outcome { return breaker.Failure }
	s := newShop(t, map[string]executor.Config{"db": cfg}, fusepgx.Config{})
	s.p.Pgx().Reset()
	eventually(t, "the pool is empty", func() bool { return s.p.Pgx().Stat().TotalConns() == 0 })
	ctx := context.Background()

	_, err := s.p.Exec(ctx, "SELECT 1")
	require.NoError(t, err)
	st := s.stats(t, "db")
	assert.Equal(t, breaker.Closed, st.Breaker.State)
	assert.EqualValues(t, 0, st.Failures, "the dial's call is no failure")
	assert.EqualValues(t, 1, st.Ignored, "it is recorded as ignored")
	assert.EqualValues(t, 1, st.Durations[breaker.Ignored].Count, "its time is in the ignored histogram")

	_, err = s.p.Exec(ctx, "SELECT 1")
	require.NoError(t, err)
	st = s.stats(t, "db")
	assert.EqualValues(t, 1, st.Successes, "the next call, on the same connection, is a success")
	assert.EqualValues(t, 0, st.Failures)
}
