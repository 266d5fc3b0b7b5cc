package executor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
)

func TestConfigFileStrict(t *testing.T) {
	t.Run("strict reaches GroupConfig.Strict", func(t *testing.T) {
		cfg, err := executor.ParseGroupConfig([]byte(`{"strict": true, "dependencies": {"payments": {}}}`))
		require.NoError(t, err)
		assert.True(t, cfg.Strict)
		g := newGroup(t, cfg)
		_, err = g.Executor("paymnets")
		assert.ErrorIs(t, err, executor.ErrUnknownDependency)
	})
	t.Run("strict must be a boolean, named by its path", func(t *testing.T) {
		_, err := executor.ParseGroupConfig([]byte(`{"strict": "yes", "dependencies": {"payments": {}}}`))
		assert.ErrorContains(t, err, "strict: want true or false")
	})
	t.Run("strict without dependencies is refused", func(t *testing.T) {
		_, err := executor.ParseGroupConfig([]byte(`{"strict": true}`))
		assert.ErrorContains(t, err, "Strict needs Dependencies")
	})
}
