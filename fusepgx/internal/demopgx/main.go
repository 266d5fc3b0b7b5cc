// Command demopgx is make demo-db's pgx half: the shop of demodb (catalog
// reads and order writes sharing one pool of 20 connections over a real
// PostgreSQL, started here, the orders table locked for -lock), over
// plain pgxpool and over fusepgx with a bulkhead per purpose. It prints a
// table and writes it to demo-pgx.md in -out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusepgx"
	"github.com/fusebox-go/fusebox/internal/pgserver"
)

// The scenario's numbers, demodb's.
const (
	poolSize     = 20
	readRate     = 200 // catalog reads per second
	writeRate    = 50  // order writes per second
	readTimeout  = time.Second
	writeTimeout = 5 * time.Second
	sample       = 100 * time.Millisecond
)

type flags struct {
	out                 string
	before, lock, after time.Duration
}

func main() {
	var f flags
	flag.StringVar(&f.out, "out", "out", "directory for demo-pgx.md")
	flag.DurationVar(&f.before, "before", 3*time.Second, "load before the lock")
	flag.DurationVar(&f.lock, "lock", 20*time.Second, "how long the orders table stays locked")
	flag.DurationVar(&f.after, "after", 9*time.Second, "load after the lock")
	flag.Parse()
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "demo-pgx:", err)
		os.Exit(1)
	}
}

func run(f flags) error {
	srv, err := pgserver.Start()
	if err != nil {
		return err
	}
	defer srv.Stop()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, srv.DSN())
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	for _, s := range []string{
		"CREATE TABLE catalog (id int PRIMARY KEY, name text, price int)",
		"INSERT INTO catalog SELECT i, 'item ' || i, i FROM generate_series(1, 1000) i",
		"CREATE TABLE orders (id serial PRIMARY KEY, item int, at timestamptz DEFAULT now())",
	} {
		if _, err := admin.Exec(ctx, s); err != nil {
			return err
		}
	}
	fmt.Printf("PostgreSQL on 127.0.0.1:%d; a pgxpool of %d connections; %d catalog reads/s (%v deadline), %d order writes/s (%v deadline); orders locked for %v\n",
		srv.Port, poolSize, readRate, readTimeout, writeRate, writeTimeout, f.lock)
	var results []*result
	for _, fuse := range []bool{false, true} {
		r, err := scenario(srv.DSN(), fuse, f)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	table := markdown(results)
	fmt.Print(table)
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(f.out, "demo-pgx.md")
	if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
		return err
	}
	fmt.Println("wrote", path)
	return nil
}

// result is what one run measured during the lock.
type result struct {
	name                          string
	readsOK, readsFailed          atomic.Int64
	writesRefused, writesTimedOut atomic.Int64
	lockWaitersMax, inUseMax      atomic.Int64
	mu                            sync.Mutex
	readLatencies                 []time.Duration
	opened, closed                time.Duration // after the lock's start, its end; -1 if never
	lockStart, lockEnd            atomic.Int64  // ns since the run's start; 0 until then
	start                         time.Time
	calls                         sync.WaitGroup
}

func (r *result) locked() bool { return r.lockStart.Load() != 0 && r.lockEnd.Load() == 0 }

// shop is one pool and the calls the scenario makes on it.
type shop struct {
	read  func(ctx context.Context, id int) error
	write func(ctx context.Context, id int) error
	inUse func() int64
	close func()
}

func plainShop(ctx context.Context, dsn string) (*shop, *executor.Group, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, nil, err
	}
	cfg.MaxConns = poolSize
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return &shop{
		read: func(ctx context.Context, id int) error {
			var name string
			return p.QueryRow(ctx, "SELECT name FROM catalog WHERE id = $1", id).Scan(&name)
		},
		write: func(ctx context.Context, id int) error {
			_, err := p.Exec(ctx, "INSERT INTO orders (item) VALUES ($1)", id)
			return err
		},
		inUse: func() int64 { return int64(p.Stat().AcquiredConns()) },
		close: p.Close,
	}, nil, nil
}

func fuseShop(ctx context.Context, dsn string) (*shop, *executor.Group, error) {
	g, err := executor.NewGroup(executor.GroupConfig{
		Suppliers: map[string]executor.Config{
			"orders":  {Slots: poolSize / 2, InvocationTimeout: writeTimeout, Breaker: breaker.Config{ResetTimeout: writeTimeout + time.Second}},
			"catalog": {Slots: poolSize / 2, InvocationTimeout: readTimeout, Breaker: breaker.Config{ResetTimeout: readTimeout + time.Second}},
		},
		Strict: true,
	})
	if err != nil {
		return nil, nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, nil, err
	}
	p, err := fusepgx.New(ctx, cfg, fusepgx.Config{Group: g, Default: "catalog", Suppliers: []string{"orders"}})
	if err != nil {
		return nil, nil, err
	}
	return &shop{
		read: func(ctx context.Context, id int) error {
			var name string
			return p.QueryRow(ctx, "SELECT name FROM catalog WHERE id = $1", id).Scan(&name)
		},
		write: func(ctx context.Context, id int) error {
			_, err := p.Exec(fusepgx.WithSupplier(ctx, "orders"), "INSERT INTO orders (item) VALUES ($1)", id)
			return err
		},
		inUse: func() int64 { return int64(p.Pgx().Stat().AcquiredConns()) },
		close: p.Close,
	}, g, nil
}

// scenario runs the load over one pool: f.before, the lock, f.after.
func scenario(dsn string, fuse bool, f flags) (*result, error) {
	ctx := context.Background()
	open, name := plainShop, "plain pgxpool"
	if fuse {
		open, name = fuseShop, "fusepgx"
	}
	fmt.Printf("==> %s\n", name)
	s, g, err := open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer s.close()
	r := &result{name: name, opened: -1, closed: -1, start: time.Now()}
	if g != nil {
		defer g.Close(ctx)
		g.Subscribe(r.event)
	}
	monitor, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer monitor.Close(ctx)
	stop := make(chan struct{})
	var loops sync.WaitGroup
	loops.Add(3)
	go r.arrive(&loops, stop, readRate, func(i int) {
		ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
		defer cancel()
		t0 := time.Now()
		err := s.read(ctx, i%1000+1)
		if !r.locked() {
			return
		}
		if err != nil {
			r.readsFailed.Add(1)
			return
		}
		r.readsOK.Add(1)
		r.mu.Lock()
		r.readLatencies = append(r.readLatencies, time.Since(t0))
		r.mu.Unlock()
	})
	go r.arrive(&loops, stop, writeRate, func(i int) {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		defer cancel()
		err := s.write(ctx, i%1000+1)
		switch {
		case !r.locked():
		case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated):
			r.writesRefused.Add(1)
		case err != nil:
			r.writesTimedOut.Add(1)
		}
	})
	go func() {
		defer loops.Done()
		tick := time.NewTicker(sample)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if !r.locked() {
				continue
			}
			storeMax(&r.inUseMax, s.inUse())
			var waiting int64
			if err := monitor.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").Scan(&waiting); err == nil {
				storeMax(&r.lockWaitersMax, waiting)
			}
		}
	}()
	time.Sleep(f.before)
	err = r.lock(dsn, f.lock)
	if err == nil {
		time.Sleep(f.after)
	}
	close(stop)
	loops.Wait()
	r.calls.Wait()
	return r, err
}

func storeMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// arrive starts call rate times a second, each on its own goroutine (an
// open loop), until stop.
func (r *result) arrive(loops *sync.WaitGroup, stop chan struct{}, rate int, call func(int)) {
	defer loops.Done()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
			r.calls.Add(1)
			go func() {
				defer r.calls.Done()
				call(i)
			}()
		}
	}
}

// lock holds LOCK TABLE orders for d from a connection of its own.
func (r *result) lock(dsn string, d time.Duration) error {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE orders IN ACCESS EXCLUSIVE MODE"); err != nil {
		tx.Rollback(ctx)
		return err
	}
	r.lockStart.Store(int64(max(time.Since(r.start), 1)))
	fmt.Printf("  %6.2fs  orders locked\n", time.Since(r.start).Seconds())
	time.Sleep(d)
	err = tx.Rollback(ctx)
	r.lockEnd.Store(int64(time.Since(r.start)))
	fmt.Printf("  %6.2fs  orders unlocked\n", time.Since(r.start).Seconds())
	return err
}

// event records the orders breaker's opening (after the lock began) and
// closing (after it ended), and prints every transition.
func (r *result) event(e breaker.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := e.Time.Sub(r.start)
	ls, le := time.Duration(r.lockStart.Load()), time.Duration(r.lockEnd.Load())
	if e.Name == "orders" && e.To == breaker.Open && r.opened < 0 && ls > 0 {
		r.opened = at - ls
	}
	if e.Name == "orders" && e.To == breaker.Closed && r.closed < 0 && le > 0 {
		r.closed = at - le
	}
	fmt.Printf("  %6.2fs  %s: %s → %s (%s)\n", at.Seconds(), e.Name, e.From, e.To, e.Reason)
}

func (r *result) readP99() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.readLatencies) == 0 {
		return 0
	}
	l := slices.Clone(r.readLatencies)
	slices.Sort(l)
	return l[len(l)*99/100]
}

func markdown(rs []*result) string {
	var b strings.Builder
	row := func(what string, f func(r *result) string) {
		b.WriteString("| " + what + " |")
		for _, r := range rs {
			b.WriteString(" " + f(r) + " |")
		}
		b.WriteString("\n")
	}
	row("during the lock", func(r *result) string { return r.name })
	row("---", func(*result) string { return "---" })
	row("catalog reads served", func(r *result) string {
		ok, all := r.readsOK.Load(), r.readsOK.Load()+r.readsFailed.Load()
		return fmt.Sprintf("%.0f %% (%d of %d)", pct(ok, all), ok, all)
	})
	row("catalog read p99 (served)", func(r *result) string { return r.readP99().Round(time.Millisecond).String() })
	row("connections held by the locked writes (max)", func(r *result) string {
		return fmt.Sprintf("%d of %d", r.lockWaitersMax.Load(), poolSize)
	})
	row("pool connections in use (max)", func(r *result) string { return fmt.Sprintf("%d of %d", r.inUseMax.Load(), poolSize) })
	row("order writes refused at once", func(r *result) string { return fmt.Sprint(r.writesRefused.Load()) })
	row("order writes that waited out their deadline", func(r *result) string { return fmt.Sprint(r.writesTimedOut.Load()) })
	row("orders breaker open after the lock began", func(r *result) string { return secs(r, r.opened) })
	row("orders breaker closed after the lock ended", func(r *result) string { return secs(r, r.closed) })
	return b.String()
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func secs(r *result, d time.Duration) string {
	switch {
	case r.name == "plain pgxpool":
		return "no breaker"
	case d < 0:
		return "never"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
