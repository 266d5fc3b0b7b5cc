module github.com/fusebox-go/fusebox/faults

go 1.25.0

require (
	github.com/Shopify/toxiproxy/v2 v2.5.0
	github.com/fusebox-go/fusebox v0.1.0
	github.com/fusebox-go/fusebox/fusegrpc v0.1.0
	github.com/rs/zerolog v1.28.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	google.golang.org/grpc v1.81.1
	// prometheus/client_golang, through Toxiproxy, would otherwise bring a
	// genproto from before googleapis/rpc became a module of its own: an
	// ambiguous import in grpc.
	google.golang.org/genproto v0.0.0-20230526203410-71b5a4ffd15e // indirect
)
