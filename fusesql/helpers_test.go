package fusesql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
	"github.com/fusebox-go/fusebox/fusesql"
)

// base is a pgx connector to the test server.
func base(t testing.TB) driver.Connector {
	t.Helper()
	cfg, err := pgx.ParseConfig(pg.DSN())
	require.NoError(t, err)
	return stdlib.GetConnector(*cfg)
}

// plainDB is a database/sql pool straight over pgx, n connections.
func plainDB(t testing.TB, n int) *sql.DB {
	t.Helper()
	db := sql.OpenDB(base(t))
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	t.Cleanup(func() { db.Close() })
	return db
}

// supplierConfig is the configuration of the tests' suppliers: a short
// invocation timeout and reset timeout, so that a fault trips, and its
// end closes the breaker, within seconds.
func supplierConfig(workers int) executor.Config {
	return executor.Config{
		Slots:             workers,
		InvocationTimeout: 2 * time.Second,
		Breaker:           breaker.Config{ResetTimeout: 3 * time.Second},
	}
}

// firstTransition returns the first transition of the supplier name into
// state to among events, if any.
func firstTransition(events []breaker.Event, name string, to breaker.State) (breaker.Event, bool) {
	for _, e := range events {
		if e.Name == name && e.To == to {
			return e, true
		}
	}
	return breaker.Event{}, false
}

// shop is a pool over the test server with the suppliers orders and
// catalog, each with its own slots, sized by OpenDB.
type shop struct {
	g   *executor.Group
	db  *sql.DB
	rec *fuseboxtest.Recorder // every transition of the group
}

func newShop(t testing.TB, deps map[string]executor.Config, cfg fusesql.Config) *shop {
	t.Helper()
	return newShopOver(t, base(t), deps, cfg)
}

// newShopOver is newShop over the connector bc.
func newShopOver(t testing.TB, bc driver.Connector, deps map[string]executor.Config, cfg fusesql.Config) *shop {
	t.Helper()
	rec := &fuseboxtest.Recorder{}
	g, err := executor.NewGroup(executor.GroupConfig{
		Default:      supplierConfig(4),
		Suppliers:    deps,
		OnTransition: rec.Listen,
	})
	require.NoError(t, err)
	cfg.Group = g
	for name := range deps {
		if name != cfg.Default {
			cfg.Suppliers = append(cfg.Suppliers, name)
		}
	}
	c, err := fusesql.Wrap(bc, cfg)
	require.NoError(t, err)
	db := c.OpenDB()
	require.NoError(t, fusesql.Check(db))
	t.Cleanup(func() {
		db.Close()
		g.Close(context.Background())
	})
	return &shop{g: g, db: db, rec: rec}
}

func (s *shop) stats(t testing.TB, name string) executor.Stats {
	t.Helper()
	ex, ok := s.g.Lookup(name)
	require.True(t, ok, "no executor %q", name)
	return ex.Stats()
}

// eventually waits for cond, generously: the tests run on loaded machines.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 20*time.Second, 10*time.Millisecond, what)
}

// released waits until no slot of the shop's suppliers and no connection
// of its pool is held.
func (s *shop) released(t testing.TB, names ...string) {
	t.Helper()
	for _, name := range names {
		eventually(t, name+": every slot given back", func() bool { return s.stats(t, name).InUse == 0 })
	}
	eventually(t, "every connection back in the pool", func() bool { return s.db.Stats().InUse == 0 })
}

// load runs fn in a loop on n goroutines until stop is closed, each call
// with its own timeout, and counts the outcomes.
type load struct {
	wg                  sync.WaitGroup
	mu                  sync.Mutex
	ok, refused, failed int
	slowest             time.Duration // of the successful calls
	firstRefusal        error
	stop                chan struct{}
}

func startLoad(n int, pause, timeout time.Duration, fn func(ctx context.Context) error) *load {
	l := &load{stop: make(chan struct{})}
	for range n {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.stop:
					return
				case <-time.After(pause):
				}
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				start := time.Now()
				err := fn(ctx)
				cancel()
				l.record(err, time.Since(start))
			}
		}()
	}
	return l
}

func (l *load) record(err error, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.ok++
		l.slowest = max(l.slowest, took)
	case isRefusal(err):
		l.refused++
		if l.firstRefusal == nil {
			l.firstRefusal = err
		}
	default:
		l.failed++
	}
}

func isRefusal(err error) bool {
	return errors.Is(err, breaker.ErrOpen) || errors.Is(err, executor.ErrSaturated)
}

// end stops the load and waits for its calls.
func (l *load) end() {
	close(l.stop)
	l.wg.Wait()
}

// more waits until 10 more calls have succeeded.
func (l *load) more(t testing.TB, what string) {
	t.Helper()
	before, _, _ := l.counts()
	eventually(t, what, func() bool { ok, _, _ := l.counts(); return ok >= before+10 })
}

func (l *load) counts() (ok, refused, failed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ok, l.refused, l.failed
}
