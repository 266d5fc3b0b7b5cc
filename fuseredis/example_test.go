package fuseredis_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseredis"
)

// A client of one node, protected by its own bulkhead and breaker. It needs
// a Redis server, so it is compiled but not run.
func Example() {
	g, err := executor.NewGroup(executor.GroupConfig{
		Default: executor.Config{
			Slots:             20, // at most the client's PoolSize
			InvocationTimeout: time.Second,
			Breaker:           breaker.Config{ResetTimeout: 2 * time.Second},
		},
	})
	if err != nil {
		panic(err)
	}
	defer func() { _ = g.Close(context.Background()) }()

	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", PoolSize: 20, ContextTimeoutEnabled: true})
	defer func() { _ = rdb.Close() }()
	rdb.AddHook(fuseredis.New(g, rdb.Options().Addr))

	v, err := rdb.Get(context.Background(), "session:42").Result()
	switch {
	case errors.Is(err, redis.Nil):
		fmt.Println("no session") // an answer: a success for the breaker
	case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy):
		fmt.Println("refused, nothing sent:", err) // names the node
	case err != nil:
		fmt.Println("failed:", err)
	default:
		fmt.Println(v)
	}
}

// Every node of a cluster gets a hook of its own, as go-redis makes the
// node's client, so that one stuck node trips alone.
func Example_cluster() {
	g, err := executor.NewGroup(executor.GroupConfig{})
	if err != nil {
		panic(err)
	}
	defer func() { _ = g.Close(context.Background()) }()

	cluster := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                 []string{"10.0.0.7:6379", "10.0.0.8:6379"},
		ContextTimeoutEnabled: true,
	})
	defer func() { _ = cluster.Close() }()
	cluster.OnNewNode(func(node *redis.Client) {
		node.AddHook(fuseredis.New(g, node.Options().Addr))
	})
}

// DefaultClassify tells the node's failures from its answers.
func ExampleDefaultClassify() {
	for _, err := range []error{
		redis.Nil,
		errors.New("redis: connection pool timeout"),
		context.Canceled,
		errors.New("dial tcp 10.0.0.7:6379: connect: connection refused"),
	} {
		v := fuseredis.DefaultClassify(err)
		switch {
		case v == nil:
			fmt.Printf("%v: an answer\n", err)
		case errors.Is(v, context.Canceled):
			fmt.Printf("%v: ignored\n", err)
		default:
			fmt.Printf("%v: a failure\n", err)
		}
	}
	// Output:
	// redis: nil: an answer
	// redis: connection pool timeout: ignored
	// context canceled: ignored
	// dial tcp 10.0.0.7:6379: connect: connection refused: a failure
}
