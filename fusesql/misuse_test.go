package fusesql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

// A Connector that Wrap did not make, the zero value or nil, has no base
// connector and no configuration: each of its methods says so, naming
// fusesql.Wrap, instead of panicking. OpenDB's pool fails every call, and
// Check, with that error.
func TestUnmadeConnectorIsAnError(t *testing.T) {
	for name, c := range map[string]*fusesql.Connector{"zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			_, err := c.Connect(context.Background())
			assert.ErrorContains(t, err, "fusesql.Wrap")
			assert.ErrorContains(t, c.Close(), "fusesql.Wrap")
			assert.Zero(t, c.Connections(), "no suppliers, no connections")
			_, err = c.Driver().Open("dsn")
			assert.ErrorContains(t, err, "fusesql.Wrap")

			db := c.OpenDB()
			defer db.Close()
			assert.ErrorContains(t, db.PingContext(context.Background()), "fusesql.Wrap")
			_, err = db.ExecContext(context.Background(), "DELETE FROM t")
			assert.ErrorContains(t, err, "fusesql.Wrap")
			assert.ErrorContains(t, fusesql.Check(db), "fusesql.Wrap")
		})
	}
}

// A Driver that WrapDriver did not make, the zero value or nil, says so,
// naming fusesql.WrapDriver: called itself, and registered, where sql.Open
// returns the error.
func TestUnmadeDriverIsAnError(t *testing.T) {
	for name, d := range map[string]*fusesql.Driver{"zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			_, err := d.Open("dsn")
			assert.ErrorContains(t, err, "fusesql.WrapDriver")
			_, err = d.OpenConnector("dsn")
			assert.ErrorContains(t, err, "fusesql.WrapDriver")

			name := fmt.Sprintf("fusesql-unmade-test-%d", registered.Add(1))
			sql.Register(name, d)
			db, err := sql.Open(name, "dsn")
			if err == nil {
				defer db.Close()
				err = db.PingContext(context.Background())
			}
			assert.ErrorContains(t, err, "fusesql.WrapDriver")
		})
	}
}

func TestCheckOfANilPool(t *testing.T) {
	assert.ErrorContains(t, fusesql.Check(nil), "nil *sql.DB")
}

// Connect with a nil context is an error, and takes no slot.
func TestConnectWithANilContext(t *testing.T) {
	c, g := fakeConnectorIn(t, fakeConnector{&fakeFuncs{}})
	//lint:ignore SA1012 the nil context is the point
	_, err := c.Connect(nil) //nolint:staticcheck
	assert.ErrorContains(t, err, "Connect with a nil context")
	assert.Zero(t, dbStats(t, g).InUse)
}

// The Driver of a Connector whose base connector has no driver (its
// Driver returns nil, as database/sql allows of a connector) cannot open a
// connection by name: it says so, and no slot is kept.
func TestDriverOfAConnectorWithoutOne(t *testing.T) {
	c, g := fakeConnectorIn(t, fakeConnector{&fakeFuncs{}})
	_, err := c.Driver().Open("dsn")
	assert.ErrorContains(t, err, "base connector's Driver returned nil")
	assert.Zero(t, dbStats(t, g).InUse)
}

// nilDriverConnector is a connector whose Driver reads its receiver, as
// most do: a nil one panics there.
type nilDriverConnector struct{ d driver.Driver }

func (c *nilDriverConnector) Connect(context.Context) (driver.Conn, error) {
	return nil, driver.ErrBadConn
}
func (c *nilDriverConnector) Driver() driver.Driver { return c.d }

// Wrap asks the base connector for its Driver at once: a typed nil
// connector, whose Driver panics, is refused with an error naming it.
func TestWrapOfATypedNilConnector(t *testing.T) {
	g, err := executor.NewGroup(executor.GroupConfig{Default: supplierConfig(1)})
	require.NoError(t, err)
	defer g.Close(context.Background())
	_, err = fusesql.Wrap((*nilDriverConnector)(nil), fusesql.Config{Group: g})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fusesql: Wrap: the base connector (*fusesql_test.nilDriverConnector)")
	var pe *breaker.PanicError
	assert.ErrorAs(t, err, &pe)
}

// fakeConnectorIn wraps c in a group of its own, closed when the test
// ends, and returns the Connector with the group.
func fakeConnectorIn(t *testing.T, c driver.Connector) (*fusesql.Connector, *executor.Group) {
	t.Helper()
	g, err := executor.NewGroup(executor.GroupConfig{Default: supplierConfig(1)})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, g.Close(context.Background())) })
	w, err := fusesql.Wrap(c, fusesql.Config{Group: g})
	require.NoError(t, err)
	return w, g
}
