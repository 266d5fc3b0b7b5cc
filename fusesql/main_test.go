package fusesql_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/fusebox-go/fusebox/internal/pgserver"
)

// pg is the PostgreSQL server every test of the package talks to: started
// here, on 127.0.0.1 and a free port, and stopped when the tests end.
var pg *pgserver.Server

// TestMain starts the server, runs the tests, stops the server, and then
// requires every goroutine the tests started to be gone: calls, deadline
// timers, the driver's connections.
func TestMain(m *testing.M) {
	var err error
	if pg, err = pgserver.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "fusesql tests need PostgreSQL (make postgresql installs it):", err)
		os.Exit(1)
	}
	code := m.Run()
	pg.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
