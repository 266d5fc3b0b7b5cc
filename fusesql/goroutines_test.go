package fusesql_test

import (
	"bytes"
	"context"
	"database/sql"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

// TestOpenRowsAndTransactionsCostNoGoroutine holds 20 Rows and 20
// transactions open and counts goroutines: none inside fusebox, and no
// more in all than plain database/sql over the same driver holds for the
// same calls (database/sql watches a cancellable context per Rows and
// transaction, and pgx per statement, with or without fusesql). The
// calls carry a deadline, as served requests do: with
// context.Background the driver would watch fusesql's contexts, which
// always carry the invocation deadline, where it watches none for plain
// database/sql (see the package documentation).
func TestOpenRowsAndTransactionsCostNoGoroutine(t *testing.T) {
	const n = 20
	// An invocation timeout far beyond the test: the Rows stay open, on a
	// loaded machine, for longer than the tests' usual 2 s, and at the
	// deadline the driver would cut them off.
	cfg := supplierConfig(2 * n)
	cfg.InvocationTimeout, cfg.Breaker.ResetTimeout = time.Minute, 2*time.Minute
	s := newShop(t, map[string]executor.Config{"db": cfg}, fusesql.Config{})
	plain := plainDB(t, 2*n)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	open := func(db *sql.DB) (extra int, closeAll func()) {
		before := runtime.NumGoroutine()
		var rows []*sql.Rows
		var txs []*sql.Tx
		for range n {
			r, err := db.QueryContext(ctx, "SELECT generate_series(1, 1000)")
			require.NoError(t, err)
			require.True(t, r.Next())
			rows = append(rows, r)
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			txs = append(txs, tx)
		}
		return runtime.NumGoroutine() - before, func() {
			for _, r := range rows {
				require.NoError(t, r.Close())
			}
			for _, tx := range txs {
				require.NoError(t, tx.Rollback())
			}
		}
	}
	// Warm both pools so that the counts see no dial.
	for _, db := range []*sql.DB{s.db, plain} {
		_, closeAll := open(db)
		closeAll()
	}
	plainExtra, closePlain := open(plain)
	fuseExtra, closeFuse := open(s.db)
	assert.Equal(t, 2*n, s.stats(t, "db").InUse, "every open Rows and transaction holds a slot")
	assert.Zero(t, libraryGoroutines(), "goroutines inside fusebox")
	// A few goroutines may come and go in the process meanwhile (the
	// executor's deadline timer, connections of earlier tests closing):
	// one per Rows or transaction would be 40 more.
	assert.LessOrEqual(t, fuseExtra, plainExtra+5, "goroutines with %d Rows and %d transactions open: fusesql %d, plain %d", n, n, fuseExtra, plainExtra)
	t.Logf("goroutines for %d open Rows + %d transactions: plain database/sql %d, fusesql %d", n, n, plainExtra, fuseExtra)
	closeFuse()
	closePlain()
	s.released(t, "db")
}

// libraryGoroutines counts the goroutines with a frame of fusebox in their
// stack, other than the tests' own.
func libraryGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("github.com/fusebox-go/fusebox/")) && !bytes.Contains(g, []byte("_test.")) &&
			!bytes.Contains(g, []byte("fusebox/internal/pgserver")) {
			count++
		}
	}
	return count
}
