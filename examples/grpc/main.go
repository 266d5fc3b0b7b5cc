// Command grpc shows per-target protection of outgoing gRPC calls with
// fusegrpc: two local gRPC servers, one of which hangs for a while.
//
//	cd examples/grpc && go run .
//
// Ten times a second the program calls both servers through interceptors
// that share one executor.Group. The payments server hangs for its first
// 1.5 seconds: its three slots fill up, the next call is refused and trips
// its breaker, and from then on payment calls fail fast with codes.Unavailable
// without being sent, while inventory calls go on being served. After the
// reset timeout one probe goes through, finds payments healthy again, and
// closes the breaker. Transitions are logged as they happen; a summary is
// printed every second. The program stops by itself after four seconds.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusegrpc"
)

const (
	runFor      = 4 * time.Second
	tick        = 100 * time.Millisecond // one call to each server per tick
	hangUntil   = 1500 * time.Millisecond
	callTimeout = 800 * time.Millisecond
)

func main() {
	start := time.Now()

	// Two servers on loopback, both grpc's own test service. payments
	// hangs (until the client gives up) during its first 1.5 seconds.
	inventory := serve(func() bool { return false })
	payments := serve(func() bool { return time.Since(start) < hangUntil })
	defer inventory.Stop()
	defer payments.Stop()

	// One executor per supplier, each with 3 slots, an 800ms timeout per
	// call, and a reset timeout longer than that. Names gives the targets
	// the suppliers' names, for the logs and the metrics.
	g, err := executor.NewGroup(executor.GroupConfig{
		Default: executor.Config{
			Slots:             3,
			InvocationTimeout: callTimeout,
			Breaker:           breaker.Config{ResetTimeout: 1200 * time.Millisecond},
		},
		OnTransition: executor.LogTransitions(logger(start)),
	})
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())
	ic := &fusegrpc.Interceptor{Group: g, Names: map[string]string{inventory.addr: "inventory", payments.addr: "payments"}}

	clients := map[string]testpb.TestServiceClient{}
	for name, addr := range map[string]string{"inventory": inventory.addr, "payments": payments.addr} {
		conn, err := grpc.NewClient(addr, append(ic.DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		clients[name] = testpb.NewTestServiceClient(conn)
	}
	fmt.Printf("inventory at %s, payments at %s (hangs for %v)\n", inventory.addr, payments.addr, hangUntil)

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		count = map[string]tally{"inventory": {}, "payments": {}}
	)
	call := func(name string) {
		defer wg.Done()
		_, err := clients[name].UnaryCall(context.Background(), &testpb.SimpleRequest{})
		mu.Lock()
		count[name][outcome(err)]++
		mu.Unlock()
	}

	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for i := 1; i <= int(runFor/tick); i++ {
		<-ticker.C
		wg.Add(2)
		go call("inventory")
		go call("payments")
		if i%int(time.Second/tick) == 0 {
			mu.Lock()
			fmt.Printf("second %d: payments: %v | inventory: %v\n", i*int(tick)/int(time.Second), count["payments"], count["inventory"])
			count = map[string]tally{"inventory": {}, "payments": {}}
			mu.Unlock()
		}
	}
	wg.Wait() // every call ends within the invocation timeout

	for _, name := range []string{"payments", "inventory"} {
		ex, _ := g.Lookup(name)
		st := ex.Stats()
		fmt.Printf("%s: breaker %s, %d ok, %d failed (%d timeouts), refused: %d open, %d busy, %d stuck\n",
			name, st.Breaker.State, st.Successes, st.Failures, st.Timeouts,
			st.Rejected.Open, st.Rejected.Busy, st.Rejected.Saturated)
	}
}

// outcome says how one call went.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, breaker.ErrOpen):
		return "refused (open)" // fail fast: nothing was sent
	case errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy):
		return "refused (saturated)" // every slot taken: refused alone if busy, the breaker tripped if stuck
	case status.Code(err) == codes.DeadlineExceeded:
		return "timed out"
	}
	return status.Code(err).String()
}

// tally counts the outcomes of one second.
type tally map[string]int

func (t tally) String() string {
	if len(t) == 0 {
		return "nothing finished"
	}
	var parts []string
	for _, o := range slices.Sorted(maps.Keys(t)) {
		parts = append(parts, fmt.Sprintf("%d %s", t[o], o))
	}
	return strings.Join(parts, ", ")
}

// logger logs the breaker transitions with times relative to the start.
func logger(start time.Time) *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindTime {
				a.Value = slog.DurationValue(a.Value.Time().Sub(start).Round(time.Millisecond))
			}
			return a
		},
	}))
}

// service answers UnaryCall, or hangs until the caller gives up while
// hung says so.
type service struct {
	testpb.UnimplementedTestServiceServer
	hung func() bool
}

func (s *service) UnaryCall(ctx context.Context, _ *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	if s.hung() {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	return &testpb.SimpleResponse{}, nil
}

// server is a local gRPC server.
type server struct {
	*grpc.Server
	addr string
}

func serve(hung func() bool) *server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	s := &server{Server: grpc.NewServer(), addr: ln.Addr().String()}
	testpb.RegisterTestServiceServer(s.Server, &service{hung: hung})
	go s.Serve(ln)
	return s
}
