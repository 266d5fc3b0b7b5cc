package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

// shop is one run of the scenario: the load on one pool, recorded in r.
type shop struct {
	db, admin *sql.DB
	r         *result
	start     time.Time
	// lockStart and lockEnd are the lock's times, in ns since start; 0
	// until then.
	lockStart, lockEnd atomic.Int64
	calls              sync.WaitGroup // the calls in flight
	loops              sync.WaitGroup // the arrivals and the monitor
	stop               chan struct{}
}

// at is the bucket of now.
func (s *shop) at() int { return min(int(time.Since(s.start)/bucket), s.r.buckets-1) }

func (s *shop) since() float64 { return time.Since(s.start).Seconds() }

// event records the orders breaker's opening (after the lock began) and
// closing (after it ended), and prints every transition.
func (s *shop) event(e breaker.Event) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	at := e.Time.Sub(s.start)
	ls, le := time.Duration(s.lockStart.Load()), time.Duration(s.lockEnd.Load())
	if e.Name == "orders" && e.To == breaker.Open && s.r.opened < 0 && ls > 0 {
		s.r.opened = at - ls
	}
	if e.Name == "orders" && e.To == breaker.Closed && s.r.closed < 0 && le > 0 {
		s.r.closed = at - le
	}
	fmt.Printf("  %6.2fs  %s: %s → %s (%s)\n", at.Seconds(), e.Name, e.From, e.To, e.Reason)
}

func (s *shop) read(i int) {
	defer s.calls.Done()
	ctx, cancel := context.WithTimeout(fusesql.WithSupplier(context.Background(), "catalog"), readTimeout)
	defer cancel()
	t0 := time.Now()
	var name string
	err := s.db.QueryRowContext(ctx, "SELECT name FROM catalog WHERE id = $1", i%1000+1).Scan(&name)
	b := s.at()
	if err != nil {
		s.r.s.readsFailed[b].Add(1)
		return
	}
	s.r.s.readsOK[b].Add(1)
	if b >= s.r.lockFrom && b < s.r.lockTo {
		s.r.mu.Lock()
		s.r.readLatencies = append(s.r.readLatencies, time.Since(t0))
		s.r.mu.Unlock()
	}
}

func (s *shop) write(i int) {
	defer s.calls.Done()
	ctx, cancel := context.WithTimeout(fusesql.WithSupplier(context.Background(), "orders"), writeTimeout)
	defer cancel()
	_, err := s.db.ExecContext(ctx, "INSERT INTO orders (item) VALUES ($1)", i%1000+1)
	b := s.at()
	switch {
	case err == nil:
		s.r.s.writesOK[b].Add(1)
	case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy):
		s.r.s.writesRefused[b].Add(1)
	default:
		s.r.s.writesFailed[b].Add(1)
	}
}

// arrive starts call rate times a second, each on its own goroutine (an
// open loop: arrivals do not wait for earlier calls), until stop.
func (s *shop) arrive(rate int, call func(int)) {
	defer s.loops.Done()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			s.calls.Add(1)
			go call(i)
		}
	}
}

// monitor samples, every bucket, the pool's connections in use and the
// server's backends waiting for a lock (from the admin pool).
func (s *shop) monitor() {
	defer s.loops.Done()
	tick := time.NewTicker(bucket)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			s.r.s.inUse[s.at()].Store(int64(s.db.Stats().InUse))
			var waiting int64
			if err := s.admin.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").Scan(&waiting); err == nil {
				s.r.s.lockWaiters[s.at()].Store(waiting)
			}
		}
	}
}

// lock holds LOCK TABLE orders for d from a connection of the admin pool.
func (s *shop) lock(d time.Duration) error {
	tx, err := s.admin.Begin()
	if err != nil {
		return err
	}
	if _, err := tx.Exec("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE"); err != nil {
		tx.Rollback()
		return err
	}
	s.lockStart.Store(int64(time.Since(s.start)))
	fmt.Printf("  %6.2fs  orders locked\n", s.since())
	time.Sleep(d)
	s.lockEnd.Store(int64(time.Since(s.start)))
	err = tx.Rollback()
	fmt.Printf("  %6.2fs  orders unlocked\n", s.since())
	return err
}

// scenario runs the load over m's pool: f.before, the lock, f.after.
func scenario(m mode, admin *sql.DB, f flags) (*result, error) {
	db, g, err := m.open()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	n := int((f.before+f.lock+f.after)/bucket) + 1
	s := &shop{db: db, admin: admin, start: time.Now(), stop: make(chan struct{}), r: &result{
		name: m.name, s: newSeries(n), buckets: n, opened: -1, closed: -1,
		lockFrom: int(f.before / bucket), lockTo: int((f.before + f.lock) / bucket),
	}}
	if g != nil {
		defer g.Close(context.Background())
		g.Subscribe(s.event)
	}
	s.loops.Add(3)
	go s.arrive(readRate, s.read)
	go s.arrive(writeRate, s.write)
	go s.monitor()
	time.Sleep(f.before)
	err = s.lock(f.lock)
	if err == nil {
		time.Sleep(f.after)
	}
	close(s.stop)
	s.loops.Wait()
	s.calls.Wait()
	return s.r, err
}
