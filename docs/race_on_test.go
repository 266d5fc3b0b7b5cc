//go:build race

package docs_test

// vetFlags are the build flags of the go vet that builds the pages' code:
// those this test binary was built with.
var vetFlags = []string{"-race"}
