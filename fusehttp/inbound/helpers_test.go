package inbound_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
)

// newGroup makes a group that the test closes at its end.
func newGroup(t *testing.T, cfg executor.GroupConfig) *executor.Group {
	t.Helper()
	g, err := executor.NewGroup(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		require.NoError(t, g.Close(ctx))
	})
	return g
}

func stats(t *testing.T, g *executor.Group, key string) executor.Stats {
	t.Helper()
	ex, err := g.Executor(key)
	require.NoError(t, err)
	return ex.Stats()
}

// get sends a GET and returns the status and the whole body, closing it.
func get(t *testing.T, c *http.Client, u string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b), nil
}

// logs is a slog destination a test reads back.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// newLogger returns a logger that writes to the returned logs.
func newLogger() (*slog.Logger, *logs) {
	l := &logs{}
	return slog.New(slog.NewTextHandler(l, nil)), l
}
