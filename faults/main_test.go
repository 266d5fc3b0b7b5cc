package faults_test

import (
	"os"
	"testing"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// TestMain runs the tests, and every goroutine they start (calls, timers,
// connections, Toxiproxy's links) must be gone when they end. Started with
// FAULTS_SUPPLIER set, the test binary is instead the supplier process of
// the SIGSTOP test (see startChild).
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(serveChild())
	}
	zerolog.SetGlobalLevel(zerolog.Disabled) // Toxiproxy's logs
	goleak.VerifyTestMain(m,
		// Toxiproxy's own leak, not ours: when a link's writer quits (the
		// client closed its connection), nothing drains the link's last
		// channel, and the pass-through stage feeding it stays blocked
		// sending to it for good.
		goleak.IgnoreTopFunction("github.com/Shopify/toxiproxy/v2/toxics.(*NoopToxic).Pipe"))
}
