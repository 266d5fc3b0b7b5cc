package fusesql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// DefaultSupplier is the supplier of the calls that name none when
// Config.Default is empty.
const DefaultSupplier = "db"

// Config sets up the protection of one database. It is plain data but for
// its functions; every field says what its zero value means.
type Config struct {
	// Group supplies one executor per supplier; its GroupConfig sets each
	// supplier's Slots, timeouts and breaker rules. Required.
	Group *executor.Group
	// Default names the supplier of calls that name none (neither
	// WithSupplier nor Key): "" means DefaultSupplier, "db". Give each
	// database wrapped over one Group a name of its own.
	Default string
	// Suppliers lists the other suppliers this database's calls may run
	// under: the names WithSupplier and Key give. A call naming any other
	// is refused, without touching the pool, with an error matching
	// executor.ErrUnknownSupplier: the pool is sized for the listed
	// suppliers (see Connector.Connections), and a name outside them
	// would bring slots the pool has no connections for. nil means only
	// Default.
	Suppliers []string
	// Key names the supplier of a call whose context names none (see
	// WithSupplier) from the statement's text: query is the SQL of a
	// query, an Exec or a Prepare, and "" for BeginTx, Ping and the dial
	// of a new connection. "" means Default. nil means Default for every
	// such call. It runs on the caller's goroutine for every call, after
	// database/sql has handed the call its pool connection (for a dial,
	// counted the connection it opens) and before the call takes a slot:
	// it must be fast and must not block (a prefix match, not a parse, nor
	// a lookup over the network). A Key that blocks holds that connection
	// outside every bulkhead, where no breaker and no invocation timeout
	// sees it, and past the caller's deadline, which only Key itself can
	// honour by watching ctx, the caller's context. If it panics, the call
	// fails with a *breaker.PanicError naming it and nothing is sent.
	Key func(ctx context.Context, query string) string
	// Classify turns the driver's error of one call into the error the
	// supplier's breaker records: nil for an answer, any error for a
	// failure. It never changes what the caller receives. nil means
	// DefaultClassify. If it panics, or ends its goroutine
	// (runtime.Goexit), the call counts as a failure with a
	// *breaker.PanicError naming it and its slot is given back; after a
	// panic the caller still gets the driver's own result. A dial that
	// succeeds is not classified: it is recorded as ignored (see Connect).
	Classify func(error) error
}

// shared is a Config checked and resolved: what a Connector and its
// Driver read on every call.
type shared struct {
	group    *executor.Group
	def      string
	names    []string        // def first, then Suppliers, each once
	allowed  map[string]bool // names as a set
	key      func(context.Context, string) string
	classify func(error) error
}

func newShared(cfg Config) (*shared, error) {
	if cfg.Group == nil {
		return nil, errors.New("fusesql: Config.Group is nil")
	}
	s := &shared{group: cfg.Group, def: cfg.Default, key: cfg.Key, classify: cfg.Classify, allowed: map[string]bool{}}
	if s.def == "" {
		s.def = DefaultSupplier
	}
	for i, name := range append([]string{s.def}, cfg.Suppliers...) {
		switch {
		case i == 0 && strings.TrimSpace(name) == "":
			// "" became DefaultSupplier above: this one is blank, not empty.
			return nil, fmt.Errorf("fusesql: Config.Default %q is blank: leave it empty for %q or name a supplier", name, DefaultSupplier)
		case strings.TrimSpace(name) == "":
			return nil, fmt.Errorf("fusesql: Config.Suppliers[%d] is empty", i-1)
		}
		if s.allowed[name] {
			continue
		}
		// Making every executor now checks each name against a Strict
		// group and gives Connections what it counts.
		if _, err := s.group.Executor(name); err != nil {
			return nil, fmt.Errorf("fusesql: supplier %q: %w", name, err)
		}
		s.allowed[name] = true
		s.names = append(s.names, name)
	}
	return s, nil
}

// A Connector is a driver.Connector that runs every call of a database
// through the executor of its supplier. Make one with Wrap and open the
// pool with OpenDB (or sql.OpenDB and Check). It is safe for concurrent
// use.
type Connector struct {
	base driver.Connector
	s    *shared
	drv  *Driver
}

// Wrap puts the executors of cfg.Group in front of the connections that
// base makes. It returns an error naming the field when cfg is not
// usable: no Group, an empty supplier name, a name a Strict group does not
// list; and one naming base when it is nil or its Driver method panics (as
// that of a nil pointer to a connector does).
func Wrap(base driver.Connector, cfg Config) (*Connector, error) {
	if base == nil {
		return nil, errors.New("fusesql: Wrap: the base connector is nil")
	}
	s, err := newShared(cfg)
	if err != nil {
		return nil, err
	}
	bd, err := baseDriver(base)
	if err != nil {
		return nil, err
	}
	return &Connector{base: base, s: s, drv: &Driver{base: bd, s: s}}, nil
}

// baseDriver returns base.Driver(), which Wrap asks for at once: on the
// caller's goroutine, before anything is set up, so that a connector that
// panics there is refused with an error instead of crashing the caller's
// start-up.
func baseDriver(base driver.Connector) (driver.Driver, error) {
	d, err := breaker.Guard("its Driver method", func() (driver.Driver, error) { return base.Driver(), nil }, nil)
	if err != nil {
		return nil, fmt.Errorf("fusesql: Wrap: the base connector (%T): %w", base, err)
	}
	return d, nil
}

// errNoConnector is the error of a Connector that Wrap did not make: the
// zero value or nil, which has no base connector and no configuration.
var errNoConnector = errors.New("fusesql: a nil or zero *Connector (make it with fusesql.Wrap)")

// made reports whether Wrap (or Driver.OpenConnector) made c.
func (c *Connector) made() bool { return c != nil && c.s != nil }

// Connect dials a new connection for database/sql's pool. The dial runs
// under a slot of the supplier of ctx (database/sql passes the context of
// the call that needs the connection), so a database that accepts
// connections but never answers holds that supplier's slots, and its
// breaker, once open, refuses new dials at once. A failed dial counts as a
// failure; a successful one is recorded as nothing (Lease.Skip): it never
// decides a half-open probe nor enters the latency history. A base
// connector that panics or ends the goroutine gives the slot back, counted
// as a panic (guard). A Connector that Wrap did not make, or a nil ctx, is
// an error.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	switch {
	case !c.made():
		return nil, errNoConnector
	case ctx == nil:
		return nil, errors.New("fusesql: Connect with a nil context (use context.Background())")
	}
	l, err := c.s.lease(ctx, "")
	if err != nil {
		return nil, err
	}
	dc, err := inDriver(l, func() (driver.Conn, error) { return c.base.Connect(l.Context()) })
	if err != nil {
		return nil, c.s.end(ctx, l, err)
	}
	// A dial is not the statement that needs it: in half-open its success
	// must not close the breaker while the statement still hangs (the
	// statement that follows is the probe), and its duration, a TCP and
	// TLS handshake and authentication, must not shape the latency history
	// that judges the supplier's slots stuck.
	l.Skip()
	return newConn(dc, c.s), nil
}

// Driver returns a *Driver over the base connector's driver, with the same
// configuration, so that Check works on the pool. For a Connector that
// Wrap did not make it returns a driver whose Open fails, saying so.
func (c *Connector) Driver() driver.Driver {
	if !c.made() {
		return broken{errNoConnector}
	}
	return c.drv
}

// Close closes the base connector if it has a Close method; sql.DB.Close
// calls it. The Group stays open: it is its owner's to close. A Connector
// that Wrap did not make has nothing to close: that is an error.
func (c *Connector) Close() error {
	if !c.made() {
		return errNoConnector
	}
	if cl, ok := c.base.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// OpenDB opens a pool over c with as many connections as the suppliers'
// slots may hold: SetMaxOpenConns and SetMaxIdleConns of Connections(), so
// that a connection is there for every slot and none is closed and
// redialled between calls. Change them later only upwards (see Check).
// OpenDB of a Connector that Wrap did not make, which has no error to
// return, returns a pool whose every call, and Check, fails with an error
// saying so.
func (c *Connector) OpenDB() *sql.DB {
	if !c.made() {
		return sql.OpenDB(broken{errNoConnector})
	}
	db := sql.OpenDB(c)
	n := c.Connections()
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	return db
}

// broken is the connector of a pool that cannot work, and its driver:
// every dial, and Check, fails with err, so that the mistake behind it
// shows on the pool's first call.
type broken struct{ err error }

func (b broken) Connect(context.Context) (driver.Conn, error) { return nil, b.err }
func (b broken) Driver() driver.Driver                        { return b }
func (b broken) Open(string) (driver.Conn, error)             { return nil, b.err }

// Connections returns the number of connections the suppliers may hold at
// once: the sum over Default and Suppliers of each executor's Slots and
// Queue (a call waiting in a supplier's queue already holds the pool
// connection it will run on). It reads the executors' current
// configuration: after a Reconfigure, check the pool again. A Connector
// that Wrap did not make has no suppliers: 0.
func (c *Connector) Connections() int {
	if !c.made() {
		return 0
	}
	return c.s.connections()
}

func (s *shared) connections() int {
	n := 0
	for _, name := range s.names {
		if ex, ok := s.group.Lookup(name); ok {
			st := ex.Stats()
			n += st.Slots + st.QueueCap
		}
	}
	return n
}

// Check returns an error if db, a pool over a Connector or a Driver of this
// package, may hand out fewer connections than its suppliers' slots may
// hold (see Connections), naming both numbers: with fewer, a supplier whose
// calls hang holds connections the others' slots count on, and their
// callers wait in database/sql's pool, where no breaker sees them, until
// their contexts end. An unlimited pool (MaxOpenConnections 0) passes.
func Check(db *sql.DB) error {
	if db == nil {
		return errors.New("fusesql: Check of a nil *sql.DB")
	}
	if b, ok := db.Driver().(broken); ok {
		return b.err
	}
	d, ok := db.Driver().(*Driver)
	switch {
	case !ok:
		return fmt.Errorf("fusesql: Check: the pool's driver is a %T, not a fusesql one", db.Driver())
	case !d.made():
		return errNoDriver
	}
	max, need := db.Stats().MaxOpenConnections, d.s.connections()
	if max != 0 && max < need {
		return fmt.Errorf("fusesql: the pool may open %d connections (SetMaxOpenConns) but the slots of %s may hold %d: set it to %d or more",
			max, strings.Join(d.s.names, ", "), need, need)
	}
	return nil
}

// supplierKey is the context key of WithSupplier.
type supplierKey struct{}

// WithSupplier returns a copy of ctx whose database calls run under the
// supplier name: its slots, its breaker. A transaction runs wholly under
// the supplier of its BeginTx context. The name must be Config.Default or
// one of Config.Suppliers.
func WithSupplier(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, supplierKey{}, name)
}

// supplier names the supplier of a call.
func (s *shared) supplier(ctx context.Context, query string) (string, error) {
	name, _ := ctx.Value(supplierKey{}).(string)
	if name == "" && s.key != nil {
		var err error
		if name, err = breaker.Guard("fusesql.Config.Key", func() (string, error) { return s.key(ctx, query), nil }, nil); err != nil {
			return "", err
		}
	}
	if name == "" {
		return s.def, nil
	}
	if !s.allowed[name] {
		return "", fmt.Errorf("fusesql: supplier %q is not in Config.Suppliers (%s): %w",
			name, strings.Join(s.names, ", "), executor.ErrUnknownSupplier)
	}
	return name, nil
}

// lease takes a slot of the call's supplier, or returns the executor's
// *executor.RejectedError, which names the supplier.
func (s *shared) lease(ctx context.Context, query string) (*executor.Lease, error) {
	name, err := s.supplier(ctx, query)
	if err != nil {
		return nil, err
	}
	return executor.LeaseIn(ctx, s.group, name)
}

// inDriver runs fn, a call of the driver's, in the slot of l under
// executor.Guard. If the driver panics or ends the goroutine
// (runtime.Goexit, as t.FailNow does in a test's fake driver) instead of
// returning, the slot is given back, the call recorded as a failure (a
// *breaker.PanicError naming the driver), and the panic (or the Goexit)
// goes on: database/sql does not recover a driver's panic and neither does
// fusesql, but a call that will never return must not keep its slot.
func inDriver[T any](l *executor.Lease, fn func() (T, error)) (T, error) {
	return inDriverEnding(fn, l.Done)
}

// inDriverErr is inDriver for a call of the driver's that returns an
// error alone.
func inDriverErr(l *executor.Lease, fn func() error) error {
	_, err := inDriver(l, func() (struct{}, error) { return struct{}{}, fn() })
	return err
}

// inDriverEnding is inDriver with abandon, instead of the lease's Done,
// called with the *breaker.PanicError of a driver that did not return.
func inDriverEnding[T any](fn func() (T, error), abandon func(error)) (T, error) {
	v, err := breaker.Guard(driverCallback, fn, abandon)
	if pe, ok := err.(*breaker.PanicError); ok && pe.Callback == driverCallback {
		abandon(pe)
		panic(pe.Value)
	}
	return v, err
}

const driverCallback = "the driver"

// done gives the slot of l back with the verdict that Config.Classify
// gives the driver's err (executor.Lease.Finish: a Classify that panics or
// ends the goroutine makes the call a failure).
func (s *shared) done(l *executor.Lease, err error) {
	if err == nil && s.classify == nil {
		l.Done(nil)
		return
	}
	classify := s.classify
	if classify == nil {
		classify = DefaultClassify
	}
	l.Finish(err, classify, "fusesql.Config.Classify")
}

// end ends the call of lease l whose driver returned err, and returns what
// the caller gets: err itself, wrapped in executor.ErrTimeout when the
// supplier's invocation timeout, not the caller's own context, ended it.
// driver.ErrSkip is returned as it is, for database/sql to see, and
// recorded as nothing (Lease.Skip): the driver sent nothing, and
// database/sql takes another way (prepare, then execute), each a call of
// its own.
func (s *shared) end(ctx context.Context, l *executor.Lease, err error) error {
	if err == nil {
		s.done(l, nil)
		return nil
	}
	if err == driver.ErrSkip { // database/sql compares it so, unwrapped
		l.Skip()
		return err
	}
	out := s.callerErr(ctx, l, err)
	s.done(l, err)
	return out
}

// callerErr is err as the caller sees it (see end): wrapped in
// executor.ErrTimeout when it is a deadline, the lease's deadline has
// passed, and the caller's context ctx has neither ended nor a deadline of
// its own as early. l is the call's lease, or for a statement in a
// transaction the transaction's, whose deadline bounds the statement.
//
// The deadline is judged by the clock as well as by the lease's context:
// that context ends when the executor's timeline fires, which a driver
// watching a context derived from it (a statement in a transaction, see
// tx.context) may beat. It must run before the lease is done, since Done
// ends the lease's context.
func (s *shared) callerErr(ctx context.Context, l *executor.Lease, err error) error {
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, executor.ErrTimeout) || ctx.Err() != nil {
		return err
	}
	lctx := l.Context()
	d, _ := lctx.Deadline()
	if lctx.Err() == nil && time.Now().Before(d) {
		return err // a deadline of the driver's own
	}
	if cd, ok := ctx.Deadline(); ok && !cd.After(d) {
		return err // the caller's own deadline
	}
	return fmt.Errorf("%w: %w", executor.ErrTimeout, err)
}
