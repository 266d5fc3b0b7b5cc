module github.com/fusebox-go/fusebox/antspool

go 1.26.0

require (
	github.com/fusebox-go/fusebox v0.0.0-00010101000000-000000000000
	github.com/panjf2000/ants/v2 v2.12.1
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sync v0.11.0 // indirect
)

replace github.com/fusebox-go/fusebox => ../
