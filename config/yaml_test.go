package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/fusebox-go/fusebox/config"
)

// A second format: fusebox's settings as a part of a program's own YAML
// file, read by a YAML library that knows nothing of fusebox, through the
// yaml tags and Duration's encoding.TextUnmarshaler.
func TestGroupFromYAML(t *testing.T) {
	type file struct {
		Listen  string       `yaml:"listen"`
		Fusebox config.Group `yaml:"fusebox"`
	}
	decode := func(doc string) (file, error) {
		var f file
		dec := yaml.NewDecoder(strings.NewReader(doc))
		dec.KnownFields(true)
		err := dec.Decode(&f)
		return f, err
	}

	t.Run("it means what the same JSON means", func(t *testing.T) {
		f, err := decode(`
listen: ":8080"
fusebox:
  default:
    slots: 10
    queue: 20
    invocationTimeout: 2s
    breaker:
      failureRate: 0.5
      windowDuration: 1m
      resetTimeout: 5s
  suppliers:
    payments:
      slots: 4
      invocationTimeout: 30s
      breaker: {resetTimeout: 90s}
    direct:
      queue: 0 # an explicit zero: no queue, although the default has one
  idleTimeout: 10m
  strict: true
`)
		require.NoError(t, err)
		assert.Equal(t, ":8080", f.Listen)
		fromYAML, err := f.Fusebox.GroupConfig()
		require.NoError(t, err)

		fromJSON, err := config.Parse([]byte(`{
			"default": {"slots": 10, "queue": 20, "invocationTimeout": "2s",
				"breaker": {"failureRate": 0.5, "windowDuration": "1m", "resetTimeout": "5s"}},
			"suppliers": {
				"payments": {"slots": 4, "invocationTimeout": "30s", "breaker": {"resetTimeout": "90s"}},
				"direct": {"queue": 0}
			},
			"idleTimeout": "10m",
			"strict": true
		}`))
		require.NoError(t, err)
		assert.Equal(t, fromJSON, fromYAML)
		assert.Equal(t, 90*time.Second, fromYAML.Suppliers["payments"].Breaker.ResetTimeout)
		assert.Equal(t, 20, fromYAML.Suppliers["payments"].Queue, "taken from the default")
		assert.Zero(t, fromYAML.Suppliers["direct"].Queue)
	})

	t.Run("a malformed duration is refused", func(t *testing.T) {
		_, err := decode("fusebox:\n  default:\n    invocationTimeout: soon\n")
		require.ErrorContains(t, err, `want a duration such as "250ms", "30s" or "1m30s", got "soon"`)
	})

	t.Run("an unknown key is refused", func(t *testing.T) {
		_, err := decode("fusebox:\n  default:\n    workerz: 3\n")
		require.ErrorContains(t, err, "field workerz not found")
	})

	t.Run("written back, it reads the same", func(t *testing.T) {
		f, err := decode("fusebox:\n  default:\n    slots: 3\n    invocationTimeout: 1m30s\n")
		require.NoError(t, err)
		out, err := yaml.Marshal(f.Fusebox)
		require.NoError(t, err)
		assert.Equal(t, "default:\n    slots: 3\n    invocationTimeout: 1m30s\n", string(out))
	})
}
