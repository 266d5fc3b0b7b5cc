package fusepgx_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusepgx"
)

// poolConfig is a pgxpool configuration for the test server.
func poolConfig(t testing.TB) *pgxpool.Config {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pg.DSN())
	require.NoError(t, err)
	return cfg
}

// plainPool is a pgxpool straight over the test server, n connections.
func plainPool(t testing.TB, n int) *pgxpool.Pool {
	t.Helper()
	cfg := poolConfig(t)
	cfg.MaxConns = int32(n)
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// connect opens one plain connection to the test server.
func connect(t testing.TB) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), pg.DSN())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// exec runs statements on a connection of their own. The tables a CREATE
// makes are dropped when the test ends: the tests of a process share one
// server, and -count runs a test again on it.
func exec(t testing.TB, stmts ...string) {
	t.Helper()
	c := connect(t)
	for _, s := range stmts {
		_, err := c.Exec(context.Background(), s)
		require.NoError(t, err, s)
		if f := strings.Fields(s); len(f) >= 3 && f[0] == "CREATE" && f[1] == "TABLE" {
			drop := "DROP TABLE IF EXISTS " + f[2]
			t.Cleanup(func() {
				c, err := pgx.Connect(context.Background(), pg.DSN())
				if assert.NoError(t, err) {
					_, err = c.Exec(context.Background(), drop)
					assert.NoError(t, err, drop)
					c.Close(context.Background())
				}
			})
		}
	}
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

// events records the transitions of a group.
type events struct {
	mu  sync.Mutex
	all []breaker.Event
}

func (e *events) add(ev breaker.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// first returns the first transition of name into to, if any.
func (e *events) first(name string, to breaker.State) (breaker.Event, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.all {
		if ev.Name == name && ev.To == to {
			return ev, true
		}
	}
	return breaker.Event{}, false
}

// since returns the transitions of name from the i-th on.
func (e *events) since(name string, i int) []breaker.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []breaker.Event
	for _, ev := range e.all[min(i, len(e.all)):] {
		if ev.Name == name {
			out = append(out, ev)
		}
	}
	return out
}

func (e *events) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.all)
}

// shop is a fusepgx pool over the test server with a supplier per entry of
// deps, sized by New.
type shop struct {
	g  *executor.Group
	p  *fusepgx.Pool
	ev *events
}

func newShop(t testing.TB, deps map[string]executor.Config, cfg fusepgx.Config) *shop {
	t.Helper()
	ev := &events{}
	g, err := executor.NewGroup(executor.GroupConfig{
		Default:      supplierConfig(4),
		Suppliers:    deps,
		OnTransition: ev.add,
	})
	require.NoError(t, err)
	cfg.Group = g
	for name := range deps {
		if name != cfg.Default && !(cfg.Default == "" && name == fusepgx.DefaultSupplier) {
			cfg.Suppliers = append(cfg.Suppliers, name)
		}
	}
	p, err := fusepgx.New(context.Background(), poolConfig(t), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		p.Close()
		g.Close(context.Background())
	})
	return &shop{g: g, p: p, ev: ev}
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

// released waits until no slot of the named suppliers and no connection
// of the shop's pool is held.
func (s *shop) released(t testing.TB, names ...string) {
	t.Helper()
	for _, name := range names {
		eventually(t, name+": every slot given back", func() bool { return s.stats(t, name).InUse == 0 })
	}
	eventually(t, "every connection back in the pool", func() bool { return s.p.Pgx().Stat().AcquiredConns() == 0 })
}

// load runs fn in a loop on n goroutines until end, each call with its own
// timeout, and counts the outcomes.
type load struct {
	wg                  sync.WaitGroup
	mu                  sync.Mutex
	ok, refused, failed int
	slowest             time.Duration // of the successful calls
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
	default:
		l.failed++
	}
}

func isRefusal(err error) bool {
	return errors.Is(err, breaker.ErrOpen) || errors.Is(err, executor.ErrSaturated) || errors.Is(err, executor.ErrBusy)
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

// warm runs n concurrent calls of the supplier name so that the pool holds
// n connections that have each carried a call.
func (s *shop) warm(t testing.TB, name string, n int) {
	t.Helper()
	ctx := fusepgx.WithSupplier(context.Background(), name)
	var rs []pgx.Rows
	for range n {
		r, err := s.p.Query(ctx, "SELECT 1")
		require.NoError(t, err)
		rs = append(rs, r)
	}
	for _, r := range rs {
		r.Close()
		require.NoError(t, r.Err())
	}
}
