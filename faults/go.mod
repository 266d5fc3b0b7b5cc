module github.com/fusebox-go/fusebox/faults

go 1.25.0

require (
	github.com/Shopify/toxiproxy/v2 v2.5.0
	github.com/fusebox-go/fusebox v0.2.0
	github.com/fusebox-go/fusebox/fusegrpc v0.2.0
	github.com/rs/zerolog v1.28.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	google.golang.org/grpc v1.81.1
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/gorilla/mux v1.8.0 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.16 // indirect
	github.com/matttproud/golang_protobuf_extensions v1.0.4 // indirect
	// Toxiproxy v2.5.0 requires client_golang v1.13.0 and common v0.37.0,
	// whose golang.org/x/oauth2 brings a google.golang.org/genproto from before
	// googleapis/rpc became a module of its own: in the workspace, an ambiguous
	// import for grpc. These are the oldest that leave it out.
	github.com/prometheus/client_golang v1.15.0 // indirect
	github.com/prometheus/client_model v0.3.0 // indirect
	github.com/prometheus/common v0.42.0 // indirect
	github.com/prometheus/procfs v0.9.0 // indirect
	github.com/rs/xid v1.4.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.51.0 // indirect
	golang.org/x/sys v0.42.0 // indirect
	golang.org/x/text v0.34.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260226221140-a57be14db171 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
	gopkg.in/tomb.v1 v1.0.0-20141024135613-dd632973f1e7 // indirect
)
