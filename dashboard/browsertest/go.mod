module github.com/fusebox-go/fusebox/dashboard/browsertest

go 1.25.0

require (
	github.com/chromedp/chromedp v0.20.0
	github.com/fusebox-go/fusebox v0.2.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/chromedp/cdproto v0.157.8 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
