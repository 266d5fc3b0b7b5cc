module github.com/fusebox-go/fusebox/docs

go 1.25.0

require (
	github.com/fusebox-go/fusebox v0.1.0
	github.com/fusebox-go/fusebox/fleet v0.1.0
	github.com/fusebox-go/fusebox/fusegrpc v0.1.0
	github.com/fusebox-go/fusebox/fuseredis v0.1.0
	github.com/fusebox-go/fusebox/fusesql v0.1.0
	github.com/fusebox-go/fusebox/metrics v0.1.0
	github.com/jackc/pgx/v5 v5.7.6
	github.com/prometheus/client_golang v1.11.1
	github.com/redis/go-redis/v9 v9.17.3
	go.uber.org/goleak v1.3.0
	google.golang.org/grpc v1.81.1
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	github.com/matttproud/golang_protobuf_extensions v1.0.1 // indirect
	github.com/prometheus/client_model v0.2.0 // indirect
	github.com/prometheus/common v0.26.0 // indirect
	github.com/prometheus/procfs v0.6.0 // indirect
	golang.org/x/crypto v0.48.0 // indirect
	golang.org/x/net v0.51.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.42.0 // indirect
	golang.org/x/text v0.34.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260226221140-a57be14db171 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
)
