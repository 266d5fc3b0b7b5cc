package inbound_test

import (
	"context"
	"io"
	"net/http"
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
