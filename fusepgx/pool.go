package fusepgx

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// DefaultSupplier is the supplier of the calls that name none when
// Config.Default is empty.
const DefaultSupplier = "db"

// Config sets up the protection of one pool. It is plain data but for its
// functions; every field says what its zero value means.
type Config struct {
	// Group supplies one executor per supplier; its GroupConfig sets each
	// supplier's Slots, timeouts and breaker rules. Required.
	Group *executor.Group
	// Default names the supplier of calls that name none (neither
	// WithSupplier nor Key): "" means DefaultSupplier, "db".
	Default string
	// Suppliers lists the other suppliers the pool's calls may run under:
	// the names WithSupplier and Key give. A call naming any other is
	// refused with an error matching executor.ErrUnknownSupplier, since
	// the pool is sized for the listed ones (see Pool.Connections). nil
	// means only Default.
	Suppliers []string
	// Key names the supplier of a call whose context names none from its
	// SQL (the first statement's for a batch, "" for Begin, BeginTx and
	// Ping); "" means Default, and nil means Default for every call. It
	// runs on the caller's goroutine before the call takes a slot: it must
	// be fast and must not block. If it panics, the call fails with a
	// *breaker.PanicError naming it and nothing is sent.
	Key func(ctx context.Context, sql string) string
	// Classify turns pgx's error of one call into the error the supplier's
	// breaker records: nil for an answer, any error for a failure. It never
	// changes what the caller receives. nil means DefaultClassify. If it
	// panics or ends its goroutine, the call counts as a failure with a
	// *breaker.PanicError naming it.
	Classify func(error) error
}

// shared is a Config checked and resolved.
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
		return nil, errors.New("fusepgx: Config.Group is nil")
	}
	s := &shared{group: cfg.Group, def: cfg.Default, key: cfg.Key, classify: cfg.Classify, allowed: map[string]bool{}}
	if s.def == "" {
		s.def = DefaultSupplier
	}
	for i, name := range append([]string{s.def}, cfg.Suppliers...) {
		switch {
		case i == 0 && strings.TrimSpace(name) == "":
			return nil, fmt.Errorf("fusepgx: Config.Default %q is blank: leave it empty for %q or name a supplier", name, DefaultSupplier)
		case strings.TrimSpace(name) == "":
			return nil, fmt.Errorf("fusepgx: Config.Suppliers[%d] is empty", i-1)
		}
		if s.allowed[name] {
			continue
		}
		// Making every executor now checks each name against a Strict
		// group and gives Connections what it counts.
		if _, err := s.group.Executor(name); err != nil {
			return nil, fmt.Errorf("fusepgx: supplier %q: %w", name, err)
		}
		s.allowed[name] = true
		s.names = append(s.names, name)
	}
	return s, nil
}

// A Pool runs every call of a *pgxpool.Pool through the executor of its
// supplier. Make one with New or Wrap. It is safe for concurrent use.
type Pool struct {
	pool *pgxpool.Pool
	s    *shared
}

// New opens a pgxpool.Pool from poolConfig (made by pgxpool.ParseConfig)
// with MaxConns raised, if lower, to the connections the suppliers' slots
// may hold (Connections), and puts cfg.Group's executors in front of it.
// It returns an error naming the field when cfg is not usable.
func New(ctx context.Context, poolConfig *pgxpool.Config, cfg Config) (*Pool, error) {
	if poolConfig == nil {
		return nil, errors.New("fusepgx: New: poolConfig is nil (make it with pgxpool.ParseConfig)")
	}
	s, err := newShared(cfg)
	if err != nil {
		return nil, err
	}
	pc := poolConfig.Copy()
	if n := s.connections(); int(pc.MaxConns) < n {
		pc.MaxConns = int32(min(n, 1<<31-1))
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, err
	}
	return &Pool{pool: pool, s: s}, nil
}

// Wrap puts cfg.Group's executors in front of pool. It returns an error
// naming the field when cfg is not usable, and one naming both numbers
// when pool's MaxConns is below Connections: with fewer connections than
// slots, a supplier whose calls hang holds connections the others' slots
// count on, and their calls wait in pgxpool for one until their deadline.
func Wrap(pool *pgxpool.Pool, cfg Config) (*Pool, error) {
	if pool == nil {
		return nil, errors.New("fusepgx: Wrap: the pool is nil")
	}
	s, err := newShared(cfg)
	if err != nil {
		return nil, err
	}
	if max, need := int(pool.Config().MaxConns), s.connections(); max < need {
		return nil, fmt.Errorf("fusepgx: the pool's MaxConns is %d but the slots of %s may hold %d: set it to %d or more",
			max, strings.Join(s.names, ", "), need, need)
	}
	return &Pool{pool: pool, s: s}, nil
}

// errNoPool is the error of a Pool that New or Wrap did not make.
var errNoPool = errors.New("fusepgx: a nil or zero *Pool (make it with fusepgx.New or fusepgx.Wrap)")

// made reports whether New or Wrap made p.
func (p *Pool) made() bool { return p != nil && p.s != nil }

// Connections returns the number of connections the suppliers may hold at
// once: the sum over Default and Suppliers of each executor's Slots
// (LimitMax for an adaptive one). A call waiting in a supplier's queue
// holds none yet. It reads the
// executors' current configuration: after a Reconfigure, check again. A
// Pool that New or Wrap did not make has no suppliers: 0.
func (p *Pool) Connections() int {
	if !p.made() {
		return 0
	}
	return p.s.connections()
}

func (s *shared) connections() int {
	n := 0
	for _, name := range s.names {
		if ex, ok := s.group.Lookup(name); ok {
			st := ex.Stats()
			n += max(st.Slots, st.LimitMax)
		}
	}
	return n
}

// Pgx returns the pool underneath (nil for a Pool that New or Wrap did
// not make). Its own methods run unprotected.
func (p *Pool) Pgx() *pgxpool.Pool {
	if !p.made() {
		return nil
	}
	return p.pool
}

// Close closes the pool underneath (pgxpool.Pool.Close: it waits for the
// connections in use to be released). The Group stays open: it is its
// owner's to close. A Pool that New or Wrap did not make has nothing to
// close.
func (p *Pool) Close() {
	if p.made() {
		p.pool.Close()
	}
}

// supplierKey is the context key of WithSupplier.
type supplierKey struct{}

// WithSupplier returns a copy of ctx whose calls run under the supplier
// name: its slots, its breaker. A transaction runs wholly under the
// supplier of its Begin context. The name must be Config.Default or one
// of Config.Suppliers.
func WithSupplier(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, supplierKey{}, name)
}

// supplier names the supplier of a call.
func (s *shared) supplier(ctx context.Context, sql string) (string, error) {
	name, _ := ctx.Value(supplierKey{}).(string)
	if name == "" && s.key != nil {
		var err error
		if name, err = breaker.Guard("fusepgx.Config.Key", func() (string, error) { return s.key(ctx, sql), nil }, nil); err != nil {
			return "", err
		}
	}
	if name == "" {
		return s.def, nil
	}
	if !s.allowed[name] {
		return "", fmt.Errorf("fusepgx: supplier %q is not in Config.Suppliers (%s): %w",
			name, strings.Join(s.names, ", "), executor.ErrUnknownSupplier)
	}
	return name, nil
}

// call is one admitted call: its slot, its pool connection, the caller's
// context and the context pgx gets (driverContext).
type call struct {
	l    *executor.Lease
	c    *pgxpool.Conn
	ctx  context.Context
	dctx context.Context
	// fresh: the connection was dialed for this call (its first call), so
	// its success decides nothing (see finish).
	fresh bool
}

// start admits a call: a slot of its supplier, then a connection from the
// pool under the slot's deadline. A dial (or pgxpool's liveness check of an
// idle connection) thus runs under the slot, and one that hangs holds it
// as a stuck statement would; but a dial decides nothing itself. A failed
// Acquire is the call's failure only while the breaker is closed, and the
// success of the first call on a new connection is recorded as nothing
// (executor.Lease.Skip, as is a failed Acquire while half-open): its time
// holds the dial's (see docs/pgx.md, "The dial rule").
func (p *Pool) start(ctx context.Context, sql string) (call, error) {
	switch {
	case !p.made():
		return call{}, errNoPool
	case ctx == nil:
		return call{}, errors.New("fusepgx: a nil context (use context.Background())")
	}
	s := p.s
	name, err := s.supplier(ctx, sql)
	if err != nil {
		return call{}, err
	}
	l, err := executor.LeaseIn(ctx, s.group, name)
	if err != nil {
		return call{}, err
	}
	cl := call{l: l, ctx: ctx, dctx: driverContext(ctx, l)}
	// pgxpool's hooks are user code.
	c, err := inPgx("pgxpool.Pool.Acquire", func() (*pgxpool.Conn, error) { return p.pool.Acquire(cl.dctx) }, cl.abandon)
	if err != nil {
		out := s.callerErr(ctx, l, err)
		if ex, ok := s.group.Lookup(name); ok && ex.Breaker().State() == breaker.HalfOpen && ctx.Err() == nil && l.Context().Err() == nil {
			l.Skip() // a failed dial decides no probe
		} else {
			s.done(l, err)
		}
		return call{}, out
	}
	cl.c, cl.fresh = c, firstCall(c)
	return cl, nil
}

// admittedKey marks, in a connection's CustomData, that a call of this
// package has run on it.
const admittedKey = "fusepgx.admitted"

// firstCall reports whether c has carried no call of this package yet: it
// was dialed for this one (or by the pool in the background).
func firstCall(c *pgxpool.Conn) bool {
	m := c.Conn().PgConn().CustomData()
	if _, ok := m[admittedKey]; ok {
		return false
	}
	m[admittedKey] = struct{}{}
	return true
}

// finish ends a call whose statement returned err: the connection goes back
// to the pool first, then the slot, with err's verdict; it returns what the
// caller gets (callerErr). Every call's lease ends here or in abandon.
func (s *shared) finish(cl *call, err error) error {
	out := err
	if err != nil {
		out = s.callerErr(cl.ctx, cl.l, err)
	}
	if cl.c != nil {
		cl.c.Release()
		cl.c = nil
	}
	if err == nil && cl.fresh {
		cl.l.Skip() // its time holds the dial's
		return nil
	}
	s.done(cl.l, err)
	return out
}

// inPgx runs fn, a call into pgx, which runs user code (a value's
// encoder, a batch's callback, a pool hook), under breaker.Guard. If it
// panics or ends the goroutine (runtime.Goexit) instead of returning,
// abandon ends the call with the *breaker.PanicError naming what, and the
// panic (or the Goexit) goes on: pgx does not recover a panic of user code
// and neither does fusepgx, but a call that will never return must not
// keep its slot.
func inPgx[T any](what string, fn func() (T, error), abandon func(error)) (T, error) {
	v, err := breaker.Guard(what, fn, abandon)
	if pe, ok := err.(*breaker.PanicError); ok && pe.Callback == what {
		abandon(pe)
		panic(pe.Value)
	}
	return v, err
}

// abandon ends a call whose code did not return, perr saying why (a
// panic), or a transaction whose slot has ended (tx.abort): the connection
// is released (pgxpool destroys one left busy), and the slot given back
// with perr, unclassified.
func (cl *call) abandon(perr error) {
	if cl.c != nil {
		cl.c.Release()
		cl.c = nil
	}
	cl.l.Done(perr)
}

// done gives the slot of l back with the verdict of err, which
// Config.Classify gives (executor.Lease.Finish: a Classify that panics or
// ends the goroutine makes the call a failure, a *breaker.PanicError
// naming it).
func (s *shared) done(l *executor.Lease, err error) {
	if err == nil && s.classify == nil {
		l.Done(nil)
		return
	}
	classify := s.classify
	if classify == nil {
		classify = DefaultClassify
	}
	l.Finish(err, classify, "fusepgx.Config.Classify")
}

// Exec runs sql under a slot held until it returns.
func (p *Pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	cl, err := p.start(ctx, sql)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := inPgx("pgx", func() (pgconn.CommandTag, error) { return cl.c.Exec(cl.dctx, sql, args...) }, cl.abandon)
	return tag, p.s.finish(&cl, err)
}

// Query runs a query under a slot held until its Rows are closed or read
// to the end. On an error the Rows returned are closed and hold it too.
func (p *Pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	cl, err := p.start(ctx, sql)
	if err != nil {
		return errRows{err}, err
	}
	r, err := inPgx("pgx", func() (pgx.Rows, error) { return cl.c.Query(cl.dctx, sql, args...) }, cl.abandon)
	if err != nil {
		err = p.s.finish(&cl, err)
		return errRows{err}, err
	}
	return &rows{r: r, cl: cl, s: p.s}, nil
}

// QueryRow is Query for at most one row: the slot is held until Scan
// returns. Errors wait for Scan, as with pgx.
func (p *Pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	r, err := p.Query(ctx, sql, args...)
	if err != nil {
		return errRows{err}
	}
	return (*row)(r.(*rows))
}

// CopyFrom runs a COPY FROM under a slot held until it returns; Key sees
// the table's sanitized name.
func (p *Pool) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	cl, err := p.start(ctx, p.keyText(table))
	if err != nil {
		return 0, err
	}
	n, err := inPgx("pgx", func() (int64, error) { return cl.c.CopyFrom(cl.dctx, table, columns, src) }, cl.abandon)
	return n, p.s.finish(&cl, err)
}

// keyText is the table's name for Key, computed only when a Key will
// read it.
func (p *Pool) keyText(table pgx.Identifier) string {
	if !p.made() || p.s.key == nil {
		return ""
	}
	return table.Sanitize()
}

// Ping pings the database under a slot of the supplier of ctx.
func (p *Pool) Ping(ctx context.Context) error {
	cl, err := p.start(ctx, "")
	if err != nil {
		return err
	}
	_, err = inPgx("pgx", func() (struct{}, error) { return struct{}{}, cl.c.Ping(cl.dctx) }, cl.abandon)
	return p.s.finish(&cl, err)
}

// SendBatch sends b under one slot, of the supplier of ctx or of the
// batch's first statement, held until the BatchResults are closed.
func (p *Pool) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if b == nil {
		return errBatch{errors.New("fusepgx: SendBatch of a nil *pgx.Batch")}
	}
	first := ""
	if len(b.QueuedQueries) > 0 && p.made() && p.s.key != nil {
		first = b.QueuedQueries[0].SQL
	}
	cl, err := p.start(ctx, first)
	if err != nil {
		return errBatch{err}
	}
	br, _ := inPgx("pgx", func() (pgx.BatchResults, error) { return cl.c.SendBatch(cl.dctx, b), nil }, cl.abandon)
	return &batch{br: br, cl: cl, s: p.s}
}
