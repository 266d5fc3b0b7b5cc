package fusegrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusegrpc"
)

func ExampleInterceptor() {
	// A server on loopback: grpc's own test service.
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := grpc.NewServer()
	testpb.RegisterTestServiceServer(srv, &service{})
	go srv.Serve(lis)
	defer srv.Stop()

	// Calls to the connection's target go through the executor the group
	// keeps under the name "inventory".
	g, _ := executor.NewGroup(executor.GroupConfig{
		Suppliers: map[string]executor.Config{"inventory": {Slots: 4}},
	})
	defer g.Close(context.Background())
	ic := &fusegrpc.Interceptor{Group: g, Names: map[string]string{lis.Addr().String(): "inventory"}}
	conn, _ := grpc.NewClient(lis.Addr().String(),
		append(ic.DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	defer conn.Close()
	client := testpb.NewTestServiceClient(conn)

	_, err := client.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	fmt.Println("first call:", status.Code(err))

	ex, _ := g.Lookup("inventory")
	ex.Breaker().Trip(breaker.Manual) // as if inventory had failed
	_, err = client.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	fmt.Println("open breaker:", status.Code(err), errors.Is(err, breaker.ErrOpen))
	fmt.Println(status.Convert(err).Message())
	// Output:
	// first call: OK
	// open breaker: Unavailable true
	// fusebox: call to inventory refused without being sent (open): its circuit breaker is open after recent failures; retry after the breaker's reset timeout
}

// A service's own methods, each on an executor of its own: a method that
// is refused answers at once, with a pushback trailer.
func ExampleServer() {
	g, _ := executor.NewGroup(executor.GroupConfig{
		Suppliers: map[string]executor.Config{"/grpc.testing.TestService/UnaryCall": {Slots: 4}},
	})
	defer g.Close(context.Background())
	s := &fusegrpc.Server{Group: g}
	lis, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := grpc.NewServer(s.ServerOptions()...)
	testpb.RegisterTestServiceServer(srv, &service{})
	go srv.Serve(lis)
	defer srv.Stop()

	conn, _ := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer conn.Close()
	client := testpb.NewTestServiceClient(conn)

	ex, _ := g.Executor("/grpc.testing.TestService/UnaryCall")
	ex.Breaker().Trip(breaker.Manual) // as the saturation of stuck handlers would
	var trailer metadata.MD
	_, err := client.UnaryCall(context.Background(), &testpb.SimpleRequest{}, grpc.Trailer(&trailer))
	ms, _ := strconv.Atoi(trailer.Get(fusegrpc.PushbackKey)[0])
	fmt.Println(status.Code(err), ms > 4000) // the time to the probe: about 5 s
	ex.Breaker().Reset()
	_, err = client.UnaryCall(context.Background(), &testpb.SimpleRequest{})
	fmt.Println(status.Code(err))
	// Output:
	// Unavailable true
	// OK
}
