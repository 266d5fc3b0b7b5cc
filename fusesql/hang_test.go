package fusesql_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

// exec runs statements on a plain pool of their own. The tables and
// roles a CREATE makes are dropped when the test ends: the tests of a
// process share one server, and -count runs a test again on it.
func exec(t testing.TB, stmts ...string) {
	t.Helper()
	db := plainDB(t, 1)
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(t, err, s)
		if f := strings.Fields(s); len(f) >= 3 && f[0] == "CREATE" && (f[1] == "TABLE" || f[1] == "ROLE") {
			drop := "DROP " + f[1] + " IF EXISTS " + f[2]
			t.Cleanup(func() {
				db := plainDB(t, 1)
				_, err := db.Exec(drop)
				assert.NoError(t, err, drop)
				db.Close()
			})
		}
	}
	db.Close()
}

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
	s := newShop(t, map[string]executor.Config{"orders": supplierConfig(4), "catalog": supplierConfig(4)}, fusesql.Config{})

	locker := plainDB(t, 1)
	tx, err := locker.Begin()
	require.NoError(t, err)
	_, err = tx.Exec("LOCK TABLE " + orders + " IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)
	locked := time.Now()

	ordersCtx := fusesql.WithSupplier(context.Background(), "orders")
	catalogCtx := fusesql.WithSupplier(context.Background(), "catalog")
	writes := startLoad(8, 20*time.Millisecond, 10*time.Second, func(ctx context.Context) error {
		_, err := s.db.ExecContext(fusesql.WithSupplier(ctx, "orders"), "INSERT INTO "+orders+" (item) VALUES ('book')")
		return err
	})
	reads := startLoad(2, 5*time.Millisecond, 10*time.Second, func(ctx context.Context) error {
		var n int
		return s.db.QueryRowContext(fusesql.WithSupplier(ctx, "catalog"), "SELECT count(*) FROM "+catalog).Scan(&n)
	})

	eventually(t, "the orders breaker opens", func() bool { _, ok := firstTransition(s.rec.Events(), "orders", breaker.Open); return ok })
	open, _ := firstTransition(s.rec.Events(), "orders", breaker.Open)
	took := open.Time.Sub(locked)
	t.Logf("orders opened %v after the lock", took)
	assert.Equal(t, breaker.Saturation, open.Reason, "trip reason")
	assert.GreaterOrEqual(t, took, 400*time.Millisecond, "stuck means older than the 0.5 s floor")
	assert.Less(t, took, 5*time.Second, "the breaker opens long before the 2 s timeouts could count")

	// While the lock holds: refusals at once, and the catalog served.
	start := time.Now()
	_, err = s.db.ExecContext(ordersCtx, "INSERT INTO "+orders+" (item) VALUES ('pen')")
	require.Error(t, err)
	assert.Less(t, time.Since(start), 1500*time.Millisecond, "a refusal waits for nothing (a wait would take the 2 s timeout)")
	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.Contains(t, err.Error(), "orders", "the refusal names its supplier")
	assert.LessOrEqual(t, s.db.Stats().InUse, 4+4, "orders holds at most its slots' connections")
	reads.more(t, "catalog reads go on during the lock")
	_, _, readFailures := reads.counts()
	assert.Zero(t, readFailures, "no catalog read failed")
	var n int
	require.NoError(t, s.db.QueryRowContext(catalogCtx, "SELECT count(*) FROM "+catalog).Scan(&n))
	assert.Equal(t, 100, n)

	require.NoError(t, tx.Rollback())
	writes.end()
	reads.end()
	_, readsRefused, _ := reads.counts()
	assert.Zero(t, readsRefused, "no catalog read was refused")
	assert.Less(t, reads.slowest, 2*time.Second, "no catalog read waited for a connection")
	s.released(t, "orders", "catalog")
	assert.Equal(t, breaker.Closed, s.stats(t, "catalog").Breaker.State, "catalog never tripped")

	// The breaker closes after its reset timeout, on a probe.
	eventually(t, "the orders breaker closes", func() bool {
		_, err := s.db.ExecContext(ordersCtx, "INSERT INTO "+orders+" (item) VALUES ('probe')")
		return err == nil && s.stats(t, "orders").Breaker.State == breaker.Closed
	})
	s.released(t, "orders")
}

// A query kind that sleeps (SELECT pg_sleep), keyed by Config.Key to a
// supplier of its own, trips alone; the default supplier over the same
// pool is served throughout. The dials of new connections run under the
// default supplier (a dial has no query for Key to read), so its slots
// allow for them: up to 8 connections, 2 fast readers.
func TestSlowQueryKindTripsAlone(t *testing.T) {
	t.Parallel()
	key := func(_ context.Context, query string) string {
		if strings.HasPrefix(query, "SELECT pg_sleep") {
			return "reports"
		}
		return ""
	}
	s := newShop(t, map[string]executor.Config{"reports": supplierConfig(3), "db": supplierConfig(10)}, fusesql.Config{Key: key})
	begun := time.Now()
	slow := startLoad(6, 20*time.Millisecond, 10*time.Second, func(ctx context.Context) error {
		var v string
		return s.db.QueryRowContext(ctx, "SELECT pg_sleep(30)::text").Scan(&v)
	})
	fast := startLoad(2, 5*time.Millisecond, 10*time.Second, func(ctx context.Context) error {
		var v int
		return s.db.QueryRowContext(ctx, "SELECT 1").Scan(&v)
	})
	eventually(t, "the reports breaker opens", func() bool { _, ok := firstTransition(s.rec.Events(), "reports", breaker.Open); return ok })
	open, _ := firstTransition(s.rec.Events(), "reports", breaker.Open)
	t.Logf("reports opened %v after the first sleep", open.Time.Sub(begun))
	assert.Equal(t, breaker.Saturation, open.Reason)
	assert.Less(t, open.Time.Sub(begun), 5*time.Second)

	var v string
	err := s.db.QueryRowContext(context.Background(), "SELECT pg_sleep(30)::text").Scan(&v)
	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.Contains(t, err.Error(), "reports")
	fast.more(t, "the default supplier is served while reports sleep")
	_, _, failed := fast.counts()
	assert.Zero(t, failed)

	slow.end()
	fast.end()
	_, fastRefused, _ := fast.counts()
	assert.Zero(t, fastRefused, "no fast query was refused: %v", fast.firstRefusal)
	// The sleeps end at the invocation timeout (2 s): the driver cancels
	// them.
	_, _, slowFailed := slow.counts()
	assert.Positive(t, slowFailed, "the sleeps timed out")
	s.released(t, "reports", "db")
	assert.Positive(t, s.stats(t, "reports").Timeouts)
	eventually(t, "the reports breaker closes", func() bool {
		err := s.db.QueryRowContext(context.Background(), "SELECT pg_sleep(0)::text").Scan(&v)
		return err == nil && s.stats(t, "reports").Breaker.State == breaker.Closed
	})
}

// The whole server stopped (SIGSTOP): connections stay open and new ones
// are accepted by the kernel, but nothing answers. Every supplier's slots
// fill with stuck calls and dials, each breaker opens by saturation, and
// callers are refused at once instead of waiting for the pool until their
// contexts end. After SIGCONT every slot and connection comes back and
// the breakers close.
func TestStoppedServerTripsFast(t *testing.T) {
	s := newShop(t, map[string]executor.Config{"orders": supplierConfig(3), "catalog": supplierConfig(3)}, fusesql.Config{})
	ping := func(name string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			var v int
			return s.db.QueryRowContext(fusesql.WithSupplier(ctx, name), "SELECT 1").Scan(&v)
		}
	}
	// Warm the pool so that the stop meets open connections too.
	for _, name := range []string{"orders", "catalog"} {
		require.NoError(t, ping(name)(context.Background()))
	}
	require.NoError(t, pg.Pause())
	paused := time.Now()
	resumed := false
	defer func() {
		if !resumed {
			pg.Resume()
		}
	}()
	loads := []*load{
		startLoad(6, 20*time.Millisecond, 10*time.Second, ping("orders")),
		startLoad(6, 20*time.Millisecond, 10*time.Second, ping("catalog")),
	}
	for _, name := range []string{"orders", "catalog"} {
		eventually(t, name+" opens", func() bool { _, ok := firstTransition(s.rec.Events(), name, breaker.Open); return ok })
		open, _ := firstTransition(s.rec.Events(), name, breaker.Open)
		t.Logf("%s opened %v after SIGSTOP (%s)", name, open.Time.Sub(paused), open.Reason)
		assert.Equal(t, breaker.Saturation, open.Reason, name)
		assert.Less(t, open.Time.Sub(paused), 5*time.Second, name)
	}
	start := time.Now()
	err := ping("orders")(context.Background())
	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.Less(t, time.Since(start), 1500*time.Millisecond, "a caller of a stopped server is refused at once (a wait would take the 2 s timeout)")

	require.NoError(t, pg.Resume())
	resumed = true
	for _, l := range loads {
		l.end()
	}
	s.released(t, "orders", "catalog")
	for _, name := range []string{"orders", "catalog"} {
		eventually(t, name+" closes", func() bool {
			return ping(name)(context.Background()) == nil && s.stats(t, name).Breaker.State == breaker.Closed
		})
	}
	s.released(t, "orders", "catalog")
}

// A killed server refuses connections: every call fails at once, each a
// failure, and the breaker opens on consecutive failures (not
// saturation: nothing waits). After a restart it closes.
func TestKilledServerCountsFailures(t *testing.T) {
	cfg := supplierConfig(4)
	cfg.Breaker.ConsecutiveFailures = 5
	s := newShop(t, map[string]executor.Config{"orders": cfg}, fusesql.Config{Default: "orders"})
	ctx := context.Background()
	var v int
	// Four connections in the pool, each dead after the kill: a pooled
	// connection found dead is no evidence either way (the pool retries
	// on another), so it must neither fail nor succeed on the breaker.
	var warm sync.WaitGroup
	for range 4 {
		warm.Go(func() { s.db.ExecContext(ctx, "SELECT pg_sleep(0.2)") })
	}
	warm.Wait()
	require.Equal(t, 4, s.db.Stats().Idle)
	successes := s.stats(t, "orders").Successes
	pg.Kill()
	restarted := false
	defer func() {
		if !restarted {
			require.NoError(t, pg.Restart())
		}
	}()
	killed := time.Now()
	var errs []error
	for i := 0; i < 20; i++ {
		err := s.db.QueryRowContext(ctx, "SELECT 1").Scan(&v)
		require.Error(t, err)
		errs = append(errs, err)
		if errors.Is(err, breaker.ErrOpen) {
			break
		}
	}
	last := errs[len(errs)-1]
	require.ErrorIs(t, last, breaker.ErrOpen, "the breaker opened within 20 calls: %v", errs)
	open, ok := firstTransition(s.rec.Events(), "orders", breaker.Open)
	require.True(t, ok)
	assert.Equal(t, breaker.ConsecutiveFailures, open.Reason)
	assert.Less(t, open.Time.Sub(killed), 5*time.Second)
	for _, err := range errs[:len(errs)-1] {
		assert.False(t, isRefusal(err), "before the trip the calls failed on the connection: %v", err)
	}
	assert.GreaterOrEqual(t, s.stats(t, "orders").Failures, uint64(5))
	assert.Equal(t, successes, s.stats(t, "orders").Successes, "no dead connection counted as a success")
	t.Logf("opened after %d calls, %v: %v", len(errs), open.Time.Sub(killed), fmt.Sprint(errs[0]))

	require.NoError(t, pg.Restart())
	restarted = true
	s.released(t, "orders")
	eventually(t, "the breaker closes", func() bool {
		return s.db.QueryRowContext(ctx, "SELECT 1").Scan(&v) == nil && s.stats(t, "orders").Breaker.State == breaker.Closed
	})
	s.released(t, "orders")
}
