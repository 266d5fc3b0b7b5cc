package fleet_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fleet"
)

// A replica of the shop links its Group to the others through Redis. AUTH
// and TLS are options of the go-redis client; a cluster works through
// redis.NewUniversalClient with several addresses. ContextTimeoutEnabled
// lets Config.OpTimeout bound each command (New refuses a client whose
// commands nothing bounds). (It needs a Redis server, so it is compiled,
// not run.)
func ExampleNew() {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:                 []string{"redis.internal:6379"},
		Password:              os.Getenv("REDIS_PASSWORD"),
		TLSConfig:             &tls.Config{MinVersion: tls.VersionTLS12},
		ContextTimeoutEnabled: true,
	})
	defer rdb.Close()
	link, err := fleet.New(fleet.Config{Client: rdb, Prefix: "shop"}, executor.GroupConfig{
		Default: executor.Config{Slots: 10, InvocationTimeout: 30 * time.Second,
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

// An operator forces a supplier open on every replica. Here no Redis can
// be reached: the replica's own breaker is forced open all the same, and
// the error says the fleet was not told.
func ExampleLink_ForceOpen() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, ContextTimeoutEnabled: true}) // nothing listens there
	defer rdb.Close()
	link, err := fleet.New(fleet.Config{Client: rdb, Prefix: "shop", Logger: slog.New(slog.DiscardHandler)}, executor.GroupConfig{})
	if err != nil {
		log.Fatal(err)
	}
	defer link.Close(context.Background())

	err = link.ForceOpen(context.Background(), "payments", "INC-4711: double charges")
	fmt.Println(err)
	ex, _ := link.Group().Lookup("payments")
	fmt.Println(ex.Breaker().State())
	// Output:
	// fleet: force-open "payments" applied on this replica only: the link to Redis is down
	// forced-open
}

// Through Sentinel, with a quorum of three replicas, the fleet's view and
// operator actions served beside the dashboard. (It needs Redis, so it is
// compiled, not run.)
func ExampleViewHandler() {
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster",
		SentinelAddrs:         []string{"sentinel-1:26379", "sentinel-2:26379", "sentinel-3:26379"},
		ContextTimeoutEnabled: true})
	defer rdb.Close()
	link, err := fleet.New(fleet.Config{Client: rdb, Prefix: "shop",
		Quorum: fleet.Quorum{Replicas: 3, Window: 10 * time.Second}}, executor.GroupConfig{})
	if err != nil {
		log.Fatal(err)
	}
	defer link.Close(context.Background())
	dash, err := dashboard.New(dashboard.Options{AllowControl: true, Control: link.Control})
	if err != nil {
		log.Fatal(err)
	}
	dash.AddGroup(link.Group())
	mux := http.NewServeMux() // the admin listener's
	mux.Handle("/fusebox/", http.StripPrefix("/fusebox", dash))
	mux.Handle("/fusebox/fleet", fleet.ViewHandler(link)) // GET ?supplier=payments
	_ = http.ListenAndServe("127.0.0.1:9090", mux)
}
