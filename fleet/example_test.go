package fleet_test

import (
	"context"
	"crypto/tls"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fleet"
)

// A replica of the shop links its Group to the others through Redis. AUTH
// and TLS are options of the go-redis client; a cluster works through
// redis.NewUniversalClient with several addresses. (It needs a Redis
// server, so it is compiled, not run.)
func ExampleNew() {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:     []string{"redis.internal:6379"},
		Password:  os.Getenv("REDIS_PASSWORD"),
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12},
	})
	defer rdb.Close()
	link, err := fleet.New(fleet.Config{Client: rdb, Prefix: "shop"}, executor.GroupConfig{
		Default: executor.Config{Workers: 10, InvocationTimeout: 30 * time.Second,
			Breaker: breaker.Config{ResetTimeout: 45 * time.Second}},
		OnTransition: executor.LogTransitions(slog.Default()),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer link.Close(context.Background())

	charge := func(ctx context.Context) (string, error) { return "receipt", nil }
	receipt, err := executor.DoIn(context.Background(), link.Group(), "payments", charge)
	if err != nil {
		log.Print(err) // errors.Is(err, breaker.ErrOpen): the fleet knows payments are down
	}
	_ = receipt
	log.Printf("fleet link up: %v", link.Stats().Up)
}
