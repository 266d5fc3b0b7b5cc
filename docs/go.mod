module github.com/fusebox-go/fusebox/docs

go 1.25.0

require go.uber.org/goleak v1.3.0

require github.com/stretchr/testify v1.12.1 // indirect
