module github.com/fusebox-go/fusebox/fuseredis

go 1.25.0

require (
	github.com/fusebox-go/fusebox v0.1.0
	github.com/redis/go-redis/v9 v9.0.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)
