package fusepgx_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusepgx"
)

// A Key that panics fails its call with a *breaker.PanicError naming it;
// nothing is sent, no slot or connection is taken, and the process goes on.
func TestAKeyThatPanicsFailsItsCall(t *testing.T) {
	t.Parallel()
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(2)}, fusepgx.Config{
		Key: func(_ context.Context, sql string) string {
			if sql == "SELECT 'boom'" {
				panic("key bug")
			}
			return ""
		},
	})
	ctx := context.Background()
	calls := map[string]func() error{
		"Exec":  func() error { _, err := s.p.Exec(ctx, "SELECT 'boom'"); return err },
		"Query": func() error { _, err := s.p.Query(ctx, "SELECT 'boom'"); return err },
		"QueryRow": func() error {
			var v string
			return s.p.QueryRow(ctx, "SELECT 'boom'").Scan(&v)
		},
		"SendBatch": func() error {
			b := &pgx.Batch{}
			b.Queue("SELECT 'boom'")
			return s.p.SendBatch(ctx, b).Close()
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			var pe *breaker.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "fusepgx.Config.Key", pe.Callback)
			assert.Equal(t, "key bug", pe.Value)
			assert.Zero(t, s.stats(t, "db").InUse)
			assert.Zero(t, s.p.Pgx().Stat().AcquiredConns())
		})
	}
	_, err := s.p.Exec(ctx, "SELECT 1")
	require.NoError(t, err, "other calls are served")
}

// A Classify that panics makes the call a failure, a *breaker.PanicError
// naming it; the caller gets pgx's own result and the slot is given back.
func TestAClassifyThatPanicsCountsAFailure(t *testing.T) {
	t.Parallel()
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(2)}, fusepgx.Config{
		Classify: func(error) error { panic("classify bug") },
	})
	s.warm(t, "db", 1)
	before := s.stats(t, "db")
	_, err := s.p.Exec(context.Background(), "SELEC 1")
	require.Error(t, err)
	var pe *breaker.PanicError
	assert.False(t, errors.As(err, &pe), "the caller gets pgx's error: %v", err)
	after := s.stats(t, "db")
	assert.Equal(t, before.Failures+1, after.Failures)
	assert.Equal(t, before.Panics+1, after.Panics)
	assert.Zero(t, after.InUse)
}

// A value whose encoding panics inside pgx (user code, as a driver.Valuer
// is) gives the slot and the connection back, counted as a panic; the
// panic goes on to the caller, as it would without fusepgx.
func TestAPanicInsidePgxGivesTheSlotBack(t *testing.T) {
	t.Parallel()
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(2)}, fusepgx.Config{})
	s.warm(t, "db", 1)
	assert.PanicsWithValue(t, "valuer bug", func() {
		_, _ = s.p.Exec(context.Background(), "SELECT $1::text", panicky{})
	})
	st := s.stats(t, "db")
	assert.Zero(t, st.InUse)
	assert.EqualValues(t, 1, st.Panics)
	s.released(t, "db")
	_, err := s.p.Exec(context.Background(), "SELECT 1")
	require.NoError(t, err)
}

type panicky struct{}

func (panicky) String() string { panic("valuer bug") }

// A Key that ends its goroutine (runtime.Goexit, as t.FailNow does) ends
// its caller's goroutine: nothing is sent, no slot or connection is taken.
func TestAKeyThatEndsItsGoroutineTakesNothing(t *testing.T) {
	t.Parallel()
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(2)}, fusepgx.Config{
		Key: func(_ context.Context, sql string) string {
			if sql == "SELECT 'exit'" {
				runtime.Goexit()
			}
			return ""
		},
	})
	returned, _ := inGoroutine(func() { _, _ = s.p.Exec(context.Background(), "SELECT 'exit'") })
	assert.False(t, returned, "the caller's goroutine ended")
	st := s.stats(t, "db")
	assert.Zero(t, st.InUse)
	assert.Zero(t, st.Successes+st.Failures+st.Ignored, "nothing was recorded")
	assert.Zero(t, s.p.Pgx().Stat().AcquiredConns())
	_, err := s.p.Exec(context.Background(), "SELECT 1")
	require.NoError(t, err, "other calls are served")
}

// A Classify that ends its goroutine makes the call a failure, a panic,
// and gives its slot and connection back before the goroutine ends.
func TestAClassifyThatEndsItsGoroutineCountsAFailure(t *testing.T) {
	t.Parallel()
	s := newShop(t, map[string]executor.Config{"db": supplierConfig(2)}, fusepgx.Config{
		Classify: func(error) error { runtime.Goexit(); return nil },
	})
	s.warm(t, "db", 1)
	before := s.stats(t, "db")
	returned, _ := inGoroutine(func() { _, _ = s.p.Exec(context.Background(), "SELEC 1") })
	assert.False(t, returned, "the caller's goroutine ended")
	after := s.stats(t, "db")
	assert.Equal(t, before.Failures+1, after.Failures)
	assert.Equal(t, before.Panics+1, after.Panics)
	assert.Zero(t, after.InUse)
	s.released(t, "db")
}

// User code that pgx runs (an argument's encoder, a Scan destination, a
// batch's callback) and that panics or ends its goroutine gives the slot
// and the connection back, counted as a panic; the panic, or the Goexit,
// goes on to the caller, as it would without fusepgx.
func TestUserCodeInsidePgxThatDoesNotReturnGivesTheSlotBack(t *testing.T) {
	t.Parallel()
	cfg := supplierConfig(2)
	cfg.Breaker.ConsecutiveFailures = 100 // every case here is a failure
	s := newShop(t, map[string]executor.Config{"db": cfg}, fusepgx.Config{})
	ctx := context.Background()
	calls := []struct {
		name string
		call func(bad func())
	}{
		{"an argument's encoder", func(bad func()) { _, _ = s.p.Exec(ctx, "SELECT $1::text", badValue{bad}) }},
		{"a Scan destination", func(bad func()) { _ = s.p.QueryRow(ctx, "SELECT 'x'::text").Scan(&badDest{bad}) }},
		{"a batch's callback", func(bad func()) {
			b := &pgx.Batch{}
			b.Queue("SELECT 1").Exec(func(pgconn.CommandTag) error { bad(); return nil })
			_ = s.p.SendBatch(ctx, b).Close()
		}},
	}
	ends := []struct {
		name      string
		bad       func()
		recovered any
	}{
		{"panic", func() { panic("user bug") }, "user bug"},
		{"Goexit", runtime.Goexit, nil},
	}
	for _, c := range calls {
		for _, e := range ends {
			t.Run(c.name+" that calls "+e.name, func(t *testing.T) {
				s.warm(t, "db", 1)
				before := s.stats(t, "db")
				returned, recovered := inGoroutine(func() { c.call(e.bad) })
				assert.False(t, returned, "the caller did not return")
				assert.Equal(t, e.recovered, recovered, "the panic goes on")
				after := s.stats(t, "db")
				assert.Equal(t, before.Panics+1, after.Panics)
				assert.Equal(t, before.Failures+1, after.Failures)
				s.released(t, "db")
				_, err := s.p.Exec(ctx, "SELECT 1")
				require.NoError(t, err, "other calls are served")
			})
		}
	}
}

// inGoroutine runs fn on a goroutine of its own and reports whether fn
// returned, and what it panicked with if it did not (nil for a Goexit).
func inGoroutine(fn func()) (returned bool, recovered any) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { recovered = recover() }()
		fn()
		returned = true
	}()
	<-done
	return returned, recovered
}

// badValue is an argument whose text encoding (fmt.Stringer) runs bad.
type badValue struct{ bad func() }

func (v badValue) String() string { v.bad(); return "" }

// badDest is a Scan destination (sql.Scanner) that runs bad.
type badDest struct{ bad func() }

func (d *badDest) Scan(any) error { d.bad(); return nil }
