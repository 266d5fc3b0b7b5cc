package fusesql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

// memConnector is a driver that answers every query with one row, 1, from
// memory: BenchmarkOverhead measures what fusesql adds to a call without
// the round trip, which on a shared machine varies far more than that.
type memConnector struct{}

func (memConnector) Connect(context.Context) (driver.Conn, error) { return memConn{}, nil }
func (memConnector) Driver() driver.Driver                        { return nil }

type memConn struct{}

func (memConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (memConn) Close() error                        { return nil }
func (memConn) Begin() (driver.Tx, error)           { return nil, driver.ErrSkip }
func (memConn) QueryContext(ctx context.Context, _ string, _ []driver.NamedValue) (driver.Rows, error) {
	_ = ctx.Done() // as pgx does: it watches the context of every call
	return &memRows{}, nil
}

type memRows struct{ done bool }

func (*memRows) Columns() []string { return []string{"v"} }
func (*memRows) Close() error      { return nil }
func (r *memRows) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	r.done = true
	dest[0] = int64(1)
	return nil
}

// BenchmarkOverhead is QueryRowContext(...).Scan over the in-memory driver,
// plain database/sql beside fusesql: the difference is fusesql's cost per
// call (make bench-db prints it beside the real server's round trip).
func BenchmarkOverhead(b *testing.B) {
	g, err := executor.NewGroup(executor.GroupConfig{Default: supplierConfig(4)})
	require.NoError(b, err)
	defer g.Close(context.Background())
	c, err := fusesql.Wrap(memConnector{}, fusesql.Config{Group: g})
	require.NoError(b, err)
	fuse := c.OpenDB()
	defer fuse.Close()
	plain := sql.OpenDB(memConnector{})
	plain.SetMaxIdleConns(4)
	defer plain.Close()
	for _, p := range []struct {
		name string
		db   *sql.DB
	}{{"plain", plain}, {"fusesql", fuse}} {
		for _, cx := range benchContexts {
			b.Run(p.name+"/"+cx.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu := startCPU()
				for b.Loop() {
					ctx, cancel := cx.ctx()
					queryRow(b, p.db, ctx)
					cancel()
				}
				cpu.report(b)
			})
		}
	}
}
