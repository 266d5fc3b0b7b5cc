package fuseboxtest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// A scripted outage: two good calls, then failures. The breaker opens on
// the third failure and the fourth call is refused without reaching the
// fake.
func ExampleFn() {
	payments, err := fuseboxtest.NewFake(
		fuseboxtest.Phase{Do: fuseboxtest.Healthy(time.Millisecond), Calls: 2},
		fuseboxtest.Phase{Do: fuseboxtest.Fail(errors.New("connection refused"))},
	)
	if err != nil {
		panic(err)
	}
	ex, _ := executor.New("payments", executor.Config{Breaker: breaker.Config{ConsecutiveFailures: 3}})
	defer ex.Close(context.Background())

	for i := 1; i <= 6; i++ {
		receipt, err := executor.Do(context.Background(), ex, fuseboxtest.Fn(payments, "receipt"))
		fmt.Println(i, receipt, err)
	}
	fmt.Println("calls that reached payments:", payments.Calls())
	// Output:
	// 1 receipt <nil>
	// 2 receipt <nil>
	// 3  connection refused
	// 4  connection refused
	// 5  connection refused
	// 6  fusebox: payments: rejected: open
	// calls that reached payments: 5
}

// A Recorder waits for a transition instead of sleeping: here the hung
// supplier's calls time out until the breaker opens.
func ExampleRecorder() {
	var rec fuseboxtest.Recorder
	ex, _ := executor.New("payments", executor.Config{
		InvocationTimeout: 10 * time.Millisecond,
		Breaker:           breaker.Config{ConsecutiveFailures: 2, ResetTimeout: time.Minute, OnTransition: rec.Listen},
	})
	defer ex.Close(context.Background())
	payments, _ := fuseboxtest.NewFake(fuseboxtest.Phase{Do: fuseboxtest.Hang()})

	for range 2 {
		_, err := executor.Do(context.Background(), ex, fuseboxtest.Fn(payments, 0))
		fmt.Println(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := rec.WaitForState(ctx, breaker.Open)
	fmt.Println(e, err)
	// Output:
	// fusebox: payments: invocation timeout after 10ms
	// fusebox: payments: invocation timeout after 10ms
	// payments: closed → open (consecutive-failures) <nil>
}

// A Fake is an http.Handler; Handler puts a scripted outage in front of a
// real one.
func ExampleFake_Handler() {
	catalog, _ := fuseboxtest.NewFake(
		fuseboxtest.Phase{Do: fuseboxtest.Fail(errors.New("catalog down")), Calls: 1},
		fuseboxtest.Phase{},
	)
	srv := httptest.NewServer(catalog.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "42 items")
	})))
	defer srv.Close()
	for range 2 {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%d %s", resp.StatusCode, body)
	}
	// Output:
	// 503 catalog down
	// 200 42 items
}

// Call fakes a supplier behind any protocol: put it first in a handler of
// your own, such as a gRPC service method, and answer as the protocol
// wants on its error.
func ExampleFake_Call() {
	inventory, _ := fuseboxtest.NewFake(fuseboxtest.Phase{Do: fuseboxtest.FailFraction(0.5, errors.New("unavailable"), 1)})
	count := func(ctx context.Context) (int, error) { // e.g. a gRPC method's body
		if err := inventory.Call(ctx); err != nil {
			return 0, err // status.FromContextError(err).Err() in a gRPC service
		}
		return 42, nil
	}
	failed := 0
	for range 100 {
		if _, err := count(context.Background()); err != nil {
			failed++
		}
	}
	fmt.Println(failed, "of 100 failed") // the same in every run: the draw is seeded
	// Output: 61 of 100 failed
}

// Transport serves a fake HTTP supplier in memory, so the client's whole
// path, fusehttp included, runs without a socket (and inside a synctest
// bubble). Two 503s open the breaker; the third request is refused.
func ExampleTransport() {
	payments, _ := fuseboxtest.NewFake(fuseboxtest.Phase{Do: fuseboxtest.Fail(errors.New("payments down"))})
	g, _ := executor.NewGroup(executor.GroupConfig{Default: executor.Config{
		Breaker: breaker.Config{ConsecutiveFailures: 2, ResetTimeout: time.Minute},
	}})
	defer g.Close(context.Background())
	client := &http.Client{Transport: &fusehttp.Transport{
		Group: g,
		Base:  &fuseboxtest.Transport{Handler: payments},
	}}
	for range 3 {
		resp, err := client.Get("http://payments.test/charge")
		if err != nil {
			fmt.Println(errors.Is(err, breaker.ErrOpen), "open")
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%d %s", resp.StatusCode, body)
	}
	// Output:
	// 503 payments down
	// 503 payments down
	// true open
}
