module github.com/fusebox-go/fusebox/docs

go 1.25.0

require (
	github.com/fusebox-go/fusebox v0.1.0
	github.com/fusebox-go/fusebox/fusegrpc v0.1.0
	github.com/fusebox-go/fusebox/metrics v0.1.0
	go.uber.org/goleak v1.3.0
)
