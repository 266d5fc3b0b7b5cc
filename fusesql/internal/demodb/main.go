// Command demodb is make demo-db: a shop whose catalog reads and order
// writes share one database/sql pool of 20 connections over a real
// PostgreSQL, started here; the orders table is locked for a while
// (-lock, 20 s by default). It runs twice, over plain database/sql and
// over fusesql with a bulkhead per purpose, and writes a table
// (demo-db.md) and a chart (demo-db.svg) into -out.
package main

import (
	"database/sql"
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
	"github.com/fusebox-go/fusebox/internal/pgserver"
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
			Suppliers: map[string]executor.Config{
				"orders":  {Slots: poolSize / 2, InvocationTimeout: writeTimeout, Breaker: breaker.Config{ResetTimeout: writeTimeout + time.Second}},
				"catalog": {Slots: poolSize / 2, InvocationTimeout: readTimeout, Breaker: breaker.Config{ResetTimeout: readTimeout + time.Second}},
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
