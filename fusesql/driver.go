package fusesql

import (
	"context"
	"database/sql/driver"
	"errors"
)

// A Driver is a driver.Driver for DSN-style use: register it once, and
// sql.Open runs every call through the executors of its Config.
//
//	d, err := fusesql.WrapDriver(stdlib.GetDefaultDriver(), cfg)
//	...
//	sql.Register("pgx+fusebox", d)
//	db, err := sql.Open("pgx+fusebox", dsn)
//	db.SetMaxOpenConns(n) // see Check
//
// It is safe for concurrent use.
type Driver struct {
	base driver.Driver
	s    *shared
}

// WrapDriver puts the executors of cfg.Group in front of the connections
// that base opens, as Wrap does for a connector.
func WrapDriver(base driver.Driver, cfg Config) (*Driver, error) {
	if base == nil {
		return nil, errors.New("fusesql: WrapDriver: the base driver is nil")
	}
	s, err := newShared(cfg)
	if err != nil {
		return nil, err
	}
	return &Driver{base: base, s: s}, nil
}

// errNoDriver is the error of a Driver that WrapDriver did not make: the
// zero value or nil, which has no base driver and no configuration.
var errNoDriver = errors.New("fusesql: a nil or zero *Driver (make it with fusesql.WrapDriver)")

// made reports whether WrapDriver (or Wrap, for its Connector) made d.
func (d *Driver) made() bool { return d != nil && d.s != nil }

// Open opens one connection to name, under a slot of the default
// supplier. database/sql calls OpenConnector instead.
func (d *Driver) Open(name string) (driver.Conn, error) {
	c, err := d.OpenConnector(name)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

// OpenConnector returns a *Connector for name: the base driver's own
// connector if it has one (driver.DriverContext), else one that calls its
// Open. A Driver that WrapDriver did not make is an error, which sql.Open
// returns; so is the Driver of a Connector whose base connector has none.
func (d *Driver) OpenConnector(name string) (driver.Connector, error) {
	switch {
	case !d.made():
		return nil, errNoDriver
	case d.base == nil:
		return nil, errors.New("fusesql: the base connector's Driver returned nil: its fusesql Driver cannot open connections by name (use the Connector)")
	}
	var base driver.Connector = dsnConnector{d: d.base, name: name}
	if dc, ok := d.base.(driver.DriverContext); ok {
		var err error
		if base, err = dc.OpenConnector(name); err != nil {
			return nil, err
		}
	}
	return &Connector{base: base, s: d.s, drv: d}, nil
}

// dsnConnector opens connections with a driver that has no connector.
type dsnConnector struct {
	d    driver.Driver
	name string
}

func (c dsnConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.d.Open(c.name)
}

func (c dsnConnector) Driver() driver.Driver { return c.d }
