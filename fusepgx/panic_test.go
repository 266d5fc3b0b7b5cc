package fusepgx_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
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
			assert.Zero(t, s.stats(t, "db").Busy)
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
	assert.Zero(t, after.Busy)
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
	assert.Zero(t, st.Busy)
	assert.EqualValues(t, 1, st.Panics)
	s.released(t, "db")
	_, err := s.p.Exec(context.Background(), "SELECT 1")
	require.NoError(t, err)
}

type panicky struct{}

func (panicky) String() string { panic("valuer bug") }
