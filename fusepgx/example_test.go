package fusepgx_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusepgx"
)

// A shop's orders and catalog share one pool, each with its own slots and
// breaker.
func ExampleNew() {
	ctx := context.Background()
	g, err := executor.NewGroup(executor.GroupConfig{
		Suppliers: map[string]executor.Config{
			"orders":  {Slots: 10, InvocationTimeout: 5 * time.Second, Breaker: breaker.Config{ResetTimeout: 10 * time.Second}},
			"catalog": {Slots: 10, InvocationTimeout: 2 * time.Second, Breaker: breaker.Config{ResetTimeout: 5 * time.Second}},
		},
		Strict: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close(ctx)
	poolConfig, err := pgxpool.ParseConfig("host=127.0.0.1 user=shop dbname=shop")
	if err != nil {
		log.Fatal(err)
	}
	db, err := fusepgx.New(ctx, poolConfig, fusepgx.Config{Group: g, Default: "catalog", Suppliers: []string{"orders"}})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	_, err = db.Exec(fusepgx.WithSupplier(ctx, "orders"), "INSERT INTO orders (item) VALUES ($1)", "book")
	switch {
	case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy):
		// Refused at once: nothing was sent, and the error names "orders".
	case errors.Is(err, executor.ErrTimeout):
		// The database did not answer within orders' invocation timeout.
	}
	var name string
	_ = db.QueryRow(ctx, "SELECT name FROM catalog WHERE id = $1", 42).Scan(&name) // under "catalog"
}
