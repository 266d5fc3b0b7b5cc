// Package fusesql puts fusebox in front of any database/sql driver: it
// wraps the driver's driver.Connector (or driver.Driver) so that one
// database/sql pool holds a bulkhead and a circuit breaker per purpose,
// each an executor of an executor.Group.
//
// A shop reads its catalog and writes its orders through one pool of 20
// connections. Someone locks the orders table. With plain database/sql
// every order write blocks on the lock holding a connection, the writes
// soon hold all 20, and the catalog reads wait in the pool for a
// connection until their deadlines. With fusesql the writes run under the
// supplier "orders", 10 slots, and the reads under "catalog", 10 slots:
// once the orders slots are held by stuck writes, the next write is
// refused with executor.ErrSaturated and trips the orders breaker, about
// a second in; order writes then fail at once with breaker.ErrOpen, while
// the catalog keeps its 10 connections:
//
//	g, err := executor.NewGroup(executor.GroupConfig{
//		Suppliers: map[string]executor.Config{
//			"orders":  {Slots: 10, InvocationTimeout: 5 * time.Second, Breaker: breaker.Config{ResetTimeout: 10 * time.Second}},
//			"catalog": {Slots: 10, InvocationTimeout: 2 * time.Second, Breaker: breaker.Config{ResetTimeout: 5 * time.Second}},
//		},
//		Strict: true,
//	})
//	...
//	pgxConfig, err := pgx.ParseConfig(dsn)
//	...
//	c, err := fusesql.Wrap(stdlib.GetConnector(*pgxConfig), fusesql.Config{
//		Group: g, Default: "catalog", Suppliers: []string{"orders"},
//	})
//	...
//	db := c.OpenDB() // sql.OpenDB(c), with SetMaxOpenConns(20): the slots' sum
//
//	_, err = db.ExecContext(fusesql.WithSupplier(ctx, "orders"), "INSERT INTO orders ...")
//	switch {
//	case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy):
//		// refused at once, nothing sent; the error names "orders"
//	case errors.Is(err, executor.ErrTimeout):
//		// the database did not answer within orders' invocation timeout
//	}
//
// # Where a call is admitted
//
// database/sql takes a connection from its pool before it calls the
// driver, and a caller that finds none free waits there, where no
// breaker sees it, until its context ends. A connector wrapper cannot act
// before that wait, so fusesql makes the wait short instead: every
// connection the pool hands out is held by an admitted call (a slot) or
// for the microseconds a refused call takes, and the pool has a
// connection for every slot. Connections is the sum of the suppliers'
// Slots (and Queue places: a call waiting in a supplier's queue already
// holds its connection); OpenDB sets SetMaxOpenConns and SetMaxIdleConns
// to it, and Check reports a pool set lower. A supplier whose database
// calls hang thus holds at most its own slots' worth of connections, and
// the other suppliers' callers always find theirs. A refused call hands
// its connection back at once.
//
// The dial of a new connection runs under a slot too, of the supplier of
// the context database/sql gives it (the call that needs the connection):
// a server that accepts connections but never answers (stopped, or out
// of backends) holds that supplier's slots, and its open breaker refuses
// further dials. A failed dial counts as a failure; a successful one is
// recorded as ignored: it is not the statement that needed it, so it
// never decides a half-open probe (that statement does) and its duration
// never enters the latency history that the stuck criterion reads. A
// dial has no statement, so Config.Key sees "" for it:
// with suppliers chosen by Key, dials run under Default, whose slots
// should allow for them. The driver's session reset (ResetSession, which
// database/sql runs before a reused connection's next call and pgx turns
// into a ping when the connection was idle) is likewise put off until the
// next call admitted on the connection and runs under its slot.
//
// # The slot rule
//
// A call holds its slot as long as the database is busy for it: an Exec
// (or a Ping, or a Prepare) until it returns; a query until its Rows are
// closed or read to the end (Close and the last Next return once the slot
// is free, so a caller that queries again at once never finds its own
// slot still held); a transaction from BeginTx until Commit or Rollback,
// its statements running under its slot and its supplier, which
// WithSupplier sets on BeginTx's context. The driver gets the slot's
// context, which ends at the supplier's InvocationTimeout: that bounds a
// statement, a query with its rows, and a whole transaction (its
// statements run with the transaction's deadline). A caller whose own
// deadline comes at or before the invocation deadline (a served request's
// short deadline, typically) has its own context handed to the driver
// instead: it ends the call at the same moment, and the driver watches a
// context that exists already rather than one made for the call. Only the
// executor's Close then cannot cut such a call short; it runs on, holding
// its slot, until that deadline. At the deadline the
// timeout is recorded on the breaker, the driver cancels the work, and the
// caller's error, whether the statement, a statement of the transaction or
// a row's read met it, matches executor.ErrTimeout; the
// slot stays held until the driver returns or the Rows are closed, as
// the connection does. Nothing in this package waits on a goroutine for
// any of these ends: open Rows and transactions cost no goroutine. (A
// driver may watch each call's context on a goroutine of its own while it
// runs, as pgx does; fusesql's contexts always carry a deadline, so the
// driver watches them even for a caller whose own context,
// context.Background, it would not have watched.) A driver that
// panics in a call (a dial, Commit, Rollback and the Rows' methods
// included) gives the slot back as the panic passes, counted as a panic (a
// failure); the panic goes on to the caller, as it would without fusesql.
//
// # Suppliers and classification
//
// A call runs under the supplier WithSupplier names on its context, else
// the one Config.Key returns for its statement, else Config.Default. The
// names must be listed (Default and Suppliers) so that the pool can be
// sized for them; another name is refused with
// executor.ErrUnknownSupplier, without touching the pool.
//
// The breaker sees one error per call, the one Config.Classify returns for
// the driver's; DefaultClassify knows no driver: broken and refused
// connections, driver.ErrBadConn, timeouts and deadlines are failures;
// sql.ErrNoRows and errors whose SQLState() is of class 22 (data), 23
// (constraint), 28 (authorization) or 42 (syntax, permission) are answers.
// The caller's own cancellation is ignored. database/sql retries a call
// that failed with driver.ErrBadConn on another connection; each try is a
// call of its own, except that a pooled connection the session reset finds
// dead (the server restarted since) is recorded as ignored: it says
// nothing of the database now. So is a try the driver answers with
// driver.ErrSkip: it sent nothing, and database/sql prepares the statement
// and runs it instead, each a call of its own. These and a successful dial
// are recorded as ignored whatever a Classify says (executor.Lease.Skip).
//
// Refusals are the executor's *executor.RejectedError: errors.Is matches
// breaker.ErrOpen or executor.ErrSaturated, and the message names the
// supplier ("fusebox: orders: rejected: open").
package fusesql
