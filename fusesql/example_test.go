package fusesql_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

// Two suppliers over one pool of PostgreSQL connections: orders, whose
// table is locked, and the catalog. The transaction holding the lock holds
// the one orders slot; orders trips on any saturation (the literal rule,
// so that the example needs no clock: with the default stuck criterion the
// write would be refused as busy until the held slot had run 0.5 s, as the
// package's tests show), so the next write trips the orders breaker, and
// later ones are refused at once, while the catalog is served from its own
// slots.
func Example() {
	g, err := executor.NewGroup(executor.GroupConfig{
		Suppliers: map[string]executor.Config{
			"orders": {Slots: 1, InvocationTimeout: 2 * time.Second, Breaker: breaker.Config{ResetTimeout: 3 * time.Second},
				Stuck: executor.StuckConfig{TripOnAnySaturation: true}},
			"catalog": {Slots: 2, InvocationTimeout: 2 * time.Second, Breaker: breaker.Config{ResetTimeout: 3 * time.Second}},
		},
		OnTransition: func(e breaker.Event) { fmt.Println("event:", e.Name, e.From, "→", e.To, "("+e.Reason.String()+")") },
	})
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())

	pgxConfig, err := pgx.ParseConfig(pg.DSN()) // the tests' own server
	if err != nil {
		panic(err)
	}
	c, err := fusesql.Wrap(stdlib.GetConnector(*pgxConfig), fusesql.Config{
		Group: g, Default: "catalog", Suppliers: []string{"orders"},
	})
	if err != nil {
		panic(err)
	}
	db := c.OpenDB()
	defer db.Close()
	fmt.Println("connections:", db.Stats().MaxOpenConnections)

	ctx := context.Background()
	orders := fusesql.WithSupplier(ctx, "orders")
	if _, err := db.ExecContext(ctx, "CREATE TABLE example_orders (item text)"); err != nil {
		panic(err)
	}
	lock, err := db.BeginTx(orders, nil) // holds the orders slot
	if err != nil {
		panic(err)
	}
	if _, err := lock.Exec("LOCK TABLE example_orders IN ACCESS EXCLUSIVE MODE"); err != nil {
		panic(err)
	}

	_, err = db.ExecContext(orders, "INSERT INTO example_orders VALUES ('book')")
	fmt.Println("saturated:", errors.Is(err, executor.ErrSaturated))
	_, err = db.ExecContext(orders, "INSERT INTO example_orders VALUES ('pen')")
	fmt.Println("open:", errors.Is(err, breaker.ErrOpen), err)

	var name string
	err = db.QueryRowContext(ctx, "SELECT 'a book'").Scan(&name)
	fmt.Println("catalog served:", name, err)

	if err := lock.Rollback(); err != nil {
		panic(err)
	}
	// Output:
	// connections: 3
	// event: orders closed → open (saturation)
	// saturated: true
	// open: true fusebox: orders: rejected: open
	// catalog served: a book <nil>
}
