package fusepgx_test

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusepgx"
)

// queryer is what both pools offer.
type queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// TestOpenRowsCostNoGoroutine holds 100 Rows open and counts goroutines:
// none inside fusebox, and no more in all than plain pgxpool holds for the
// same queries (pgx watches the context of each open Rows on a goroutine
// of its own, with or without fusepgx). The queries carry a deadline, as
// served requests do.
func TestOpenRowsCostNoGoroutine(t *testing.T) {
	const n = 100
	cfg := supplierConfig(n)
	cfg.InvocationTimeout, cfg.Breaker.ResetTimeout = time.Minute, 2*time.Minute
	s := newShop(t, map[string]executor.Config{"db": cfg}, fusepgx.Config{})
	plain := plainPool(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	open := func(p queryer) (extra int, closeAll func()) {
		before := runtime.NumGoroutine()
		var rows []pgx.Rows
		for range n {
			r, err := p.Query(ctx, "SELECT generate_series(1, 1000)")
			require.NoError(t, err)
			require.True(t, r.Next())
			rows = append(rows, r)
		}
		return runtime.NumGoroutine() - before, func() {
			for _, r := range rows {
				r.Close()
				require.NoError(t, r.Err())
			}
		}
	}
	// Warm both pools so that the counts see no dial, then wait for the
	// warm-up's context watchers, which end on their own goroutines after
	// their Rows close: counted as there before the plain pool's queries
	// and gone during them, they once made its count 0.
	base := runtime.NumGoroutine()
	for _, p := range []queryer{s.p, plain} {
		_, closeAll := open(p)
		closeAll()
	}
	eventually(t, "the warm-up's context watchers end", func() bool { return runtime.NumGoroutine() <= base+5 })
	plainExtra, closePlain := open(plain)
	fuseExtra, closeFuse := open(s.p)
	assert.Equal(t, n, s.stats(t, "db").InUse, "every open Rows holds a slot")
	assert.Zero(t, libraryGoroutines(), "goroutines inside fusebox")
	// Goroutines come and go meanwhile (the executor's deadline timer,
	// pgxpool's health check, pgx's context watchers starting and ending:
	// the two counts differed by 9 in one run); one per Rows would be 100
	// more.
	assert.LessOrEqual(t, fuseExtra, plainExtra+n/2, "goroutines with %d Rows open: fusepgx %d, plain %d", n, fuseExtra, plainExtra)
	t.Logf("goroutines for %d open Rows: plain pgxpool %d, fusepgx %d", n, plainExtra, fuseExtra)
	closeFuse()
	closePlain()
	s.released(t, "db")
}

// libraryGoroutines counts the goroutines with a frame of fusebox in their
// stack, other than the tests' own and the test server's.
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
