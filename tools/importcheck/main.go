// Command importcheck imports every package of the library and nothing
// else, and reports how many goroutines are running once the imports are
// initialized: one (main) is the promise that importing fusebox starts
// nothing. TestImportStartsNoGoroutine runs it and checks that the list
// below names every package.
package main

import (
	"fmt"
	"os"
	"runtime"

	_ "github.com/fusebox-go/fusebox"
	_ "github.com/fusebox-go/fusebox/breaker"
	_ "github.com/fusebox-go/fusebox/bulkhead"
	_ "github.com/fusebox-go/fusebox/config"
	_ "github.com/fusebox-go/fusebox/dashboard"
	_ "github.com/fusebox-go/fusebox/executor"
	_ "github.com/fusebox-go/fusebox/fuseboxtest"
	_ "github.com/fusebox-go/fusebox/fusehttp"
	_ "github.com/fusebox-go/fusebox/fusehttp/inbound"
	_ "github.com/fusebox-go/fusebox/future"
	_ "github.com/fusebox-go/fusebox/policy"
	_ "github.com/fusebox-go/fusebox/priority"
	_ "github.com/fusebox-go/fusebox/readiness"
	_ "github.com/fusebox-go/fusebox/shed"
	_ "github.com/fusebox-go/fusebox/throttle"
)

func main() {
	n := runtime.NumGoroutine()
	fmt.Println(n)
	if n != 1 {
		buf := make([]byte, 1<<16)
		os.Stderr.Write(buf[:runtime.Stack(buf, true)])
		os.Exit(1)
	}
}
