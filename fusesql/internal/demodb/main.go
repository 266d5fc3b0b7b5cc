// Command demodb is make demo-db: a shop whose catalog reads and order
// writes share one database/sql pool of 20 connections over a real
// PostgreSQL, started here; the orders table is locked for a while
// (-lock, 20 s by default). It runs twice, over plain database/sql and
// over fusesql with a bulkhead per purpose, and writes a table
// (demo-db.md) and a chart (demo-db.svg) into -out.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
	"github.com/fusebox-go/fusebox/fusesql/internal/pgserver"
)

// The scenario's numbers.
const (
	poolSize     = 20
	readRate     = 200 // catalog reads per second
	writeRate    = 50  // order writes per second
	readTimeout  = time.Second
	writeTimeout = 5 * time.Second
	bucket       = 100 * time.Millisecond
)

type flags struct {
	out          string
	before, lock time.Duration
	after        time.Duration
}

func main() {
	var f flags
	flag.StringVar(&f.out, "out", "out", "directory for demo-db.md and demo-db.svg")
	flag.DurationVar(&f.before, "before", 3*time.Second, "load before the lock")
	flag.DurationVar(&f.lock, "lock", 20*time.Second, "how long the orders table stays locked")
	flag.DurationVar(&f.after, "after", 9*time.Second, "load after the lock")
	flag.Parse()
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "demo-db:", err)
		os.Exit(1)
	}
}

func run(f flags) error {
	srv, err := pgserver.Start()
	if err != nil {
		return err
	}
	defer srv.Stop()
	cfg, err := pgx.ParseConfig(srv.DSN())
	if err != nil {
		return err
	}
	admin := sql.OpenDB(stdlib.GetConnector(*cfg))
	defer admin.Close()
	for _, s := range []string{
		"CREATE TABLE catalog (id int PRIMARY KEY, name text, price int)",
		"INSERT INTO catalog SELECT i, 'item ' || i, i FROM generate_series(1, 1000) i",
		"CREATE TABLE orders (id serial PRIMARY KEY, item int, at timestamptz DEFAULT now())",
	} {
		if _, err := admin.Exec(s); err != nil {
			return err
		}
	}
	fmt.Printf("PostgreSQL on 127.0.0.1:%d; a pool of %d connections; %d catalog reads/s (%v deadline), %d order writes/s (%v deadline); orders locked for %v\n",
		srv.Port, poolSize, readRate, readTimeout, writeRate, writeTimeout, f.lock)
	var results []*result
	for _, m := range []mode{plainMode(cfg), fuseMode(cfg)} {
		fmt.Printf("==> %s\n", m.name)
		r, err := scenario(m, admin, f)
		if err != nil {
			return err
		}
		r.print()
		results = append(results, r)
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	table := markdown(results, f)
	fmt.Println(table)
	if err := os.WriteFile(filepath.Join(f.out, "demo-db.md"), []byte(table), 0o644); err != nil {
		return err
	}
	svg := chart(results, f)
	if err := os.WriteFile(filepath.Join(f.out, "demo-db.svg"), []byte(svg), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s and %s\n", filepath.Join(f.out, "demo-db.md"), filepath.Join(f.out, "demo-db.svg"))
	return nil
}

// mode is one way of opening the shop's pool.
type mode struct {
	name string
	open func() (*sql.DB, *executor.Group, error)
}

func plainMode(cfg *pgx.ConnConfig) mode {
	return mode{name: "plain database/sql", open: func() (*sql.DB, *executor.Group, error) {
		db := sql.OpenDB(stdlib.GetConnector(*cfg))
		db.SetMaxOpenConns(poolSize)
		db.SetMaxIdleConns(poolSize)
		return db, nil, nil
	}}
}

func fuseMode(cfg *pgx.ConnConfig) mode {
	return mode{name: "fusesql", open: func() (*sql.DB, *executor.Group, error) {
		g, err := executor.NewGroup(executor.GroupConfig{
			Dependencies: map[string]executor.Config{
				"orders":  {Workers: poolSize / 2, InvocationTimeout: writeTimeout, Breaker: breaker.Config{ResetTimeout: writeTimeout + time.Second}},
				"catalog": {Workers: poolSize / 2, InvocationTimeout: readTimeout, Breaker: breaker.Config{ResetTimeout: readTimeout + time.Second}},
			},
			Strict: true,
		})
		if err != nil {
			return nil, nil, err
		}
		c, err := fusesql.Wrap(stdlib.GetConnector(*cfg), fusesql.Config{Group: g, Default: "catalog", Suppliers: []string{"orders"}})
		if err != nil {
			return nil, nil, err
		}
		return c.OpenDB(), g, nil // 20 connections: the slots' sum
	}}
}

// series are per-bucket counts of one run.
type series struct {
	readsOK, readsFailed, writesOK, writesRefused, writesFailed []atomic.Int64
	lockWaiters                                                 []atomic.Int64 // backends waiting for the lock, sampled
	inUse                                                       []atomic.Int64 // the pool's connections in use, sampled
}

func newSeries(n int) *series {
	return &series{
		readsOK: make([]atomic.Int64, n), readsFailed: make([]atomic.Int64, n),
		writesOK: make([]atomic.Int64, n), writesRefused: make([]atomic.Int64, n), writesFailed: make([]atomic.Int64, n),
		lockWaiters: make([]atomic.Int64, n), inUse: make([]atomic.Int64, n),
	}
}

type result struct {
	name          string
	s             *series
	buckets       int
	lockFrom      int // bucket of the lock's start
	lockTo        int
	mu            sync.Mutex
	opened        time.Duration // after the lock's start; -1 if never
	closed        time.Duration // after the lock's end; -1 if never
	readLatencies []time.Duration
}

func scenario(m mode, admin *sql.DB, f flags) (*result, error) {
	db, g, err := m.open()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if g != nil {
		defer g.Close(context.Background())
	}
	total := f.before + f.lock + f.after
	n := int(total/bucket) + 1
	r := &result{name: m.name, s: newSeries(n), buckets: n, opened: -1, closed: -1,
		lockFrom: int(f.before / bucket), lockTo: int((f.before + f.lock) / bucket)}
	start := time.Now()
	var lockStart, lockEnd atomic.Int64 // ns since start
	if g != nil {
		g.Subscribe(func(e breaker.Event) {
			r.mu.Lock()
			defer r.mu.Unlock()
			at := e.Time.Sub(start)
			switch {
			case e.Name == "orders" && e.To == breaker.Open && r.opened < 0 && lockStart.Load() > 0:
				r.opened = at - time.Duration(lockStart.Load())
			case e.Name == "orders" && e.To == breaker.Closed && lockEnd.Load() > 0 && r.closed < 0:
				r.closed = at - time.Duration(lockEnd.Load())
			}
			fmt.Printf("  %6.2fs  %s: %s → %s (%s)\n", at.Seconds(), e.Name, e.From, e.To, e.Reason)
		})
	}
	at := func() int { return min(int(time.Since(start)/bucket), n-1) }
	var wg sync.WaitGroup
	read := func(i int) {
		defer wg.Done()
		ctx, cancel := context.WithTimeout(fusesql.WithSupplier(context.Background(), "catalog"), readTimeout)
		defer cancel()
		t0 := time.Now()
		var name string
		err := db.QueryRowContext(ctx, "SELECT name FROM catalog WHERE id = $1", i%1000+1).Scan(&name)
		b := at()
		if err != nil {
			r.s.readsFailed[b].Add(1)
			return
		}
		r.s.readsOK[b].Add(1)
		if b >= r.lockFrom && b < r.lockTo {
			r.mu.Lock()
			r.readLatencies = append(r.readLatencies, time.Since(t0))
			r.mu.Unlock()
		}
	}
	write := func(i int) {
		defer wg.Done()
		ctx, cancel := context.WithTimeout(fusesql.WithSupplier(context.Background(), "orders"), writeTimeout)
		defer cancel()
		_, err := db.ExecContext(ctx, "INSERT INTO orders (item) VALUES ($1)", i%1000+1)
		b := at()
		switch {
		case err == nil:
			r.s.writesOK[b].Add(1)
		case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated):
			r.s.writesRefused[b].Add(1)
		default:
			r.s.writesFailed[b].Add(1)
		}
	}
	stop := make(chan struct{})
	var loops sync.WaitGroup
	arrive := func(rate int, call func(int)) {
		defer loops.Done()
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
				wg.Add(1)
				go call(i)
			}
		}
	}
	loops.Add(3)
	go arrive(readRate, read)
	go arrive(writeRate, write)
	go func() { // the monitor: backends waiting for a lock, from the admin pool
		defer loops.Done()
		tick := time.NewTicker(bucket)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				r.s.inUse[at()].Store(int64(db.Stats().InUse))
				var waiting int64
				if err := admin.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").Scan(&waiting); err == nil {
					r.s.lockWaiters[at()].Store(waiting)
				}
			}
		}
	}()

	time.Sleep(f.before)
	tx, err := admin.Begin()
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE"); err != nil {
		return nil, err
	}
	lockStart.Store(int64(time.Since(start)))
	fmt.Printf("  %6.2fs  orders locked\n", time.Since(start).Seconds())
	time.Sleep(f.lock)
	lockEnd.Store(int64(time.Since(start)))
	if err := tx.Rollback(); err != nil {
		return nil, err
	}
	fmt.Printf("  %6.2fs  orders unlocked\n", time.Since(start).Seconds())
	time.Sleep(f.after)
	close(stop)
	loops.Wait()
	wg.Wait()
	return r, nil
}
