package fleet_test

import (
	"log/slog"
	"os"
)

func init() {
	if os.Getenv("FLEET_DEBUG") != "" {
		testLogger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}
