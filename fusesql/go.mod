module github.com/fusebox-go/fusebox/fusesql

go 1.25.0

require (
	github.com/fusebox-go/fusebox v0.1.0
	github.com/jackc/pgx/v5 v5.7.6
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)
