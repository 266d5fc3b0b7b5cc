module github.com/fusebox-go/fusebox/antspool

go 1.25.0

require (
	github.com/fusebox-go/fusebox v0.2.0
	github.com/panjf2000/ants/v2 v2.12.1
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sync v0.11.0 // indirect
)
