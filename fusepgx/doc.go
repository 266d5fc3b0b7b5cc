// Package fusepgx puts fusebox in front of pgx's own pool: a Pool runs
// every call of a *pgxpool.Pool under a bulkhead and a circuit breaker of
// its purpose (its supplier), each an executor of an executor.Group, all
// inside the one pool. It is fusesql's sibling for services that use pgx
// directly rather than database/sql.
//
// A shop reads its catalog and writes its orders through one pool of 20
// connections. Someone locks the orders table. With plain pgxpool every
// order write blocks on the lock holding a connection, the writes soon
// hold all 20, and the catalog reads wait in the pool until their
// deadlines. With fusepgx the writes run under the supplier "orders", 10
// slots, and the reads under "catalog", 10 slots: once the orders slots are
// held by stuck writes, the next write is refused with
// executor.ErrSaturated and trips the orders breaker, about a second in;
// order writes then fail at once with breaker.ErrOpen, while the catalog
// keeps its 10 connections:
//
//	g, err := executor.NewGroup(executor.GroupConfig{
//		Suppliers: map[string]executor.Config{
//			"orders":  {Slots: 10, InvocationTimeout: 5 * time.Second, Breaker: breaker.Config{ResetTimeout: 10 * time.Second}},
//			"catalog": {Slots: 10, InvocationTimeout: 2 * time.Second, Breaker: breaker.Config{ResetTimeout: 5 * time.Second}},
//		},
//		Strict: true,
//	})
//	...
//	poolConfig, err := pgxpool.ParseConfig(dsn)
//	...
//	db, err := fusepgx.New(ctx, poolConfig, fusepgx.Config{
//		Group: g, Default: "catalog", Suppliers: []string{"orders"},
//	}) // MaxConns raised to 20: the slots' sum
//	...
//	_, err = db.Exec(fusepgx.WithSupplier(ctx, "orders"), "INSERT INTO orders ...")
//	switch {
//	case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated):
//		// refused at once, nothing sent; the error names "orders"
//	case errors.Is(err, executor.ErrTimeout):
//		// the database did not answer within orders' invocation timeout
//	}
//
// # Where a call is admitted
//
// A call takes its supplier's slot first, then a connection from the pool
// under the slot's deadline: a refused call touches no connection. The
// pool needs a connection for every slot (Connections, the sum of the
// suppliers' Slots), so that a supplier whose calls hang holds at most
// its own slots' worth and the others always find theirs: New raises
// MaxConns to it and Wrap refuses a smaller pool.
//
// # The slot rule
//
// A call holds its slot and its connection as long as the database is
// busy for it: Exec, CopyFrom and Ping until they return; Query until its
// Rows are closed or Next returns false (QueryRow until Scan returns); a
// batch until its BatchResults are closed; a transaction from Begin until
// Commit or Rollback, its statements running under its slot, each bounded
// by its deadline. The slot's deadline is the supplier's
// InvocationTimeout; at it the timeout is recorded, pgx cancels the work,
// and the caller's error matches executor.ErrTimeout. A transaction past
// its deadline is rolled back by its next call, which gives the slot back.
// Open Rows, batches and transactions cost no goroutine of this package.
//
// # Dials decide nothing
//
// pgxpool dials a new connection inside Acquire, under the call's slot.
// A dial's success never counts: the success of the first call on a new
// connection is recorded as ignored, whatever a Classify would say, so it
// neither closes a half-open breaker nor gives the supplier's latency
// history a sample that holds a dial. A failed Acquire is the call's failure while the breaker is
// closed (a database that is down trips its suppliers) and decides
// nothing while it is half-open. A dial that hangs past the deadline is
// the call's timeout, as a statement's would be.
//
// # Suppliers and classification
//
// A call runs under the supplier WithSupplier names on its context, else
// the one Config.Key returns for its SQL, else Config.Default; the names
// must be listed (Default and Suppliers), and another is refused with
// executor.ErrUnknownSupplier. The breaker sees the error
// Config.Classify returns (DefaultClassify: SQLSTATE classes 22, 23, 28
// and 42 and pgx.ErrNoRows are answers, as in fusesql); a failed Scan is
// the caller's, an answer too; the caller's own cancellation is ignored.
// Refusals are the executor's *executor.RejectedError, naming the
// supplier.
package fusepgx
