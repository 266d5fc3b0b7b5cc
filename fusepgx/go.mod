module github.com/fusebox-go/fusebox/fusepgx

go 1.25.0

require (
	github.com/fusebox-go/fusebox v0.1.0
	github.com/jackc/pgx/v5 v5.8.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)
