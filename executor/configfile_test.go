package executor_test

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// The documented example file loads, and means what its comments say.
func TestLoadExampleConfig(t *testing.T) {
	cfg, err := executor.LoadGroupConfig(filepath.Join("..", "examples", "config.json"))
	require.NoError(t, err)
	assert.Equal(t, executor.GroupConfig{
		Default: executor.Config{Workers: 10, InvocationTimeout: 2 * time.Second, Breaker: breaker.Config{
			ConsecutiveFailures: 5, FailureRate: 0.5, MinimumCalls: 20, WindowDuration: time.Minute, ResetTimeout: 5 * time.Second,
		}},
		Dependencies: map[string]executor.Config{
			"payments": {Workers: 4, InvocationTimeout: 30 * time.Second, Breaker: breaker.Config{
				ResetTimeout: 45 * time.Second, MaxResetTimeout: 5 * time.Minute, ResetJitter: 0.2,
			}},
			"reports": {Workers: 2, Queue: 100, QueueTimeout: 10 * time.Second, LowWater: 50, InvocationTimeout: 20 * time.Second,
				Breaker: breaker.Config{ResetTimeout: time.Minute}},
			"search": {Workers: 20, InvocationTimeout: 800 * time.Millisecond, Breaker: breaker.Config{
				SlowCallRate: 0.8, SlowCallDuration: 500 * time.Millisecond,
			}},
		},
		IdleTimeout: 10 * time.Minute,
	}, cfg)

	g := newGroup(t, cfg)
	for name, want := range map[string][2]int{"payments": {4, 0}, "reports": {2, 100}, "search": {20, 0}, "catalog": {10, 0}} {
		ex, err := g.Executor(name)
		require.NoError(t, err)
		st := ex.Stats()
		assert.Equal(t, want[0], st.Workers, "%s: workers", name)
		assert.Equal(t, want[1], st.QueueCap, "%s: queue", name)
	}
}

func TestParseGroupConfigFields(t *testing.T) {
	t.Run("every field reaches its Go field", func(t *testing.T) {
		cfg, err := executor.ParseGroupConfig([]byte(`{
			"default": {
				"workers": 3, "queue": 8, "queueTimeout": "2s", "lowWater": 2, "invocationTimeout": "1500ms",
				"breaker": {
					"consecutiveFailures": -1, "failureRate": 0.25, "slowCallRate": 0.5, "slowCallDuration": "700ms",
					"minimumCalls": 7, "windowDuration": "30s", "windowBuckets": 6, "resetTimeout": "4s", "maxResetTimeout": "1m",
					"resetJitter": 0.1, "halfOpenProbes": 3
				}
			},
			"dependencies": {"b": {"breaker": {"windowBuckets": 3}}},
			"idleTimeout": "90s"
		}`))
		require.NoError(t, err)
		assert.Equal(t, executor.GroupConfig{
			Default: executor.Config{Workers: 3, Queue: 8, QueueTimeout: 2 * time.Second, LowWater: 2, InvocationTimeout: 1500 * time.Millisecond,
				Breaker: breaker.Config{
					ConsecutiveFailures: -1, FailureRate: 0.25, SlowCallRate: 0.5, SlowCallDuration: 700 * time.Millisecond,
					MinimumCalls: 7, WindowDuration: 30 * time.Second, WindowBuckets: 6, ResetTimeout: 4 * time.Second,
					MaxResetTimeout: time.Minute, ResetJitter: 0.1, HalfOpenProbes: 3,
				}},
			Dependencies: map[string]executor.Config{"b": {Breaker: breaker.Config{WindowBuckets: 3}}},
			IdleTimeout:  90 * time.Second,
		}, cfg)
	})

	t.Run("a dependency cannot switch the default's count window to a time window", func(t *testing.T) {
		// A zero field inherits the default's, so the dependency ends up
		// with both, which the breaker refuses.
		_, err := executor.ParseGroupConfig([]byte(`{
			"default": {"breaker": {"failureRate": 0.5, "windowSize": 40}},
			"dependencies": {"b": {"breaker": {"windowDuration": "30s"}}}
		}`))
		require.ErrorContains(t, err, "executor: b: breaker: WindowSize")
	})

	t.Run("an empty object is the zero GroupConfig", func(t *testing.T) {
		cfg, err := executor.ParseGroupConfig([]byte(`{}`))
		require.NoError(t, err)
		assert.Equal(t, executor.GroupConfig{}, cfg)
	})

	t.Run("null and comments count as absent", func(t *testing.T) {
		cfg, err := executor.ParseGroupConfig([]byte(`{"//": "top", "default": {"//why": "x", "workers": null, "queue": 4},
			"dependencies": {"//": "no dependency is called that", "a": {"workers": 2}}}`))
		require.NoError(t, err)
		assert.Equal(t, executor.GroupConfig{
			Default:      executor.Config{Queue: 4},
			Dependencies: map[string]executor.Config{"a": {Workers: 2}},
		}, cfg)
	})
}

func TestParseGroupConfigErrors(t *testing.T) {
	// The validation errors are New's own.
	_, errNew := executor.New("default", executor.Config{InvocationTimeout: 5 * time.Second})
	require.Error(t, errNew)

	tests := []struct {
		name string
		json string
		want []string
	}{
		{"a malformed duration names its field", `{"dependencies": {"payments": {"invocationTimeout": "30 s"}}}`,
			[]string{`executor: config: dependencies.payments.invocationTimeout: time: unknown unit " s" in duration "30 s"`}},
		{"a duration must be a string", `{"default": {"invocationTimeout": 30}}`,
			[]string{`default.invocationTimeout: want a duration string such as "30s", got the number 30`}},
		{"an unknown field lists the known ones", `{"default": {"workerz": 3}}`,
			[]string{"default.workerz: unknown field (known: workers, queue, queueTimeout, lowWater, invocationTimeout, breaker)"}},
		{"names are matched exactly", `{"default": {"Workers": 3}}`,
			[]string{`default.Workers: unknown field (did you mean "workers"?)`}},
		{"a func cannot come from a file", `{"default": {"breaker": {"classify": "5xx"}}}`,
			[]string{"default.breaker.classify: cannot come from a file: Breaker.Classify is a func"}},
		{"error kinds cannot come from a file", `{"default": {"breaker": {"errorKinds": []}}}`,
			[]string{"default.breaker.errorKinds: cannot come from a file"}},
		{"a count must be an integer", `{"default": {"workers": "ten"}}`,
			[]string{`default.workers: want an integer, got the string "ten"`}},
		{"a fraction is not an integer", `{"default": {"workers": 2.5}}`, []string{"default.workers: want an integer, got 2.5"}},
		{"a rate must be a number", `{"default": {"breaker": {"failureRate": "half"}}}`,
			[]string{`default.breaker.failureRate: want a number, got the string "half"`}},
		{"an object must be an object", `{"dependencies": []}`, []string{"dependencies: want an object, got an array"}},
		{"the document must be an object", `[1]`, []string{"top level: want an object, got an array"}},
		{"a host name key is quoted in the path", `{"dependencies": {"api.example.com:443": {"timeout": "1s"}}}`,
			[]string{`dependencies["api.example.com:443"].timeout: unknown field`}},
		{"every problem is reported at once", `{"idleTimeout": "soon", "default": {"queue": true}}`,
			[]string{`idleTimeout: time: invalid duration "soon"`, "default.queue: want an integer, got true"}},
		{"a syntax error has its line and column", "{\n  \"default\": {\"workers\": 3,}\n}",
			[]string{"executor: config: line 2, column 28: invalid character '}'"}},
		{"an empty document", "", []string{"executor: config: empty document"}},
		{"data after the object", `{} {}`, []string{"unexpected data after the top-level object"}},
		{"a stray brace after the object", `{} }`, []string{"unexpected data after the top-level object"}},
		{"null is not a configuration", `null`, []string{"top level: want an object, got null"}},
		{"validation: the errors of New", `{"default": {"invocationTimeout": "5s"}}`, []string{errNew.Error()}},
		{"validation: a dependency's error names it", `{"dependencies": {"reports": {"queue": 10, "lowWater": 10}}}`,
			[]string{"executor: reports: LowWater (10) must be below Queue (10)"}},
		{"validation: breaker rules are checked too, by dependency", `{"dependencies": {"search": {"breaker": {"failureRate": 2}}}}`,
			[]string{"executor: search: breaker: FailureRate must be in (0, 1]"}},
		{"validation: a default breaker rule", `{"default": {"breaker": {"resetJitter": 3}}}`,
			[]string{"executor: default: breaker: ResetJitter"}},
		{"validation: group fields", `{"idleTimeout": "-1s"}`, []string{"IdleTimeout must be ≥ 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := executor.ParseGroupConfig([]byte(tt.json))
			require.Error(t, err)
			assert.Zero(t, cfg)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestLoadGroupConfig(t *testing.T) {
	t.Run("a missing file is a not-exist error", func(t *testing.T) {
		_, err := executor.LoadGroupConfig(filepath.Join(t.TempDir(), "nope.json"))
		require.ErrorIs(t, err, fs.ErrNotExist)
	})

	t.Run("errors start with the file's path", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fusebox.json")
		require.NoError(t, os.WriteFile(path, []byte(`{"default": {"workers": -1}}`), 0o600))
		_, err := executor.LoadGroupConfig(path)
		require.Error(t, err)
		assert.Regexp(t, `^.*fusebox\.json: executor: default: Workers must be ≥ 1`, err.Error())
	})
}

func ExampleParseGroupConfig() {
	cfg, err := executor.ParseGroupConfig([]byte(`{
		"default": {"workers": 10, "invocationTimeout": "2s"},
		"dependencies": {
			"payments": {"workers": 4, "invocationTimeout": "30s", "breaker": {"resetTimeout": "45s"}}
		}
	}`))
	if err != nil {
		panic(err)
	}
	// What a file cannot hold is set in code.
	cfg.OnTransition = executor.LogTransitions(slog.Default())
	fmt.Println(cfg.Default.Workers, cfg.Default.InvocationTimeout)
	fmt.Println(cfg.Dependencies["payments"].Workers, cfg.Dependencies["payments"].Breaker.ResetTimeout)

	_, err = executor.ParseGroupConfig([]byte(`{"dependencies": {"payments": {"invocationTimeout": "30"}}}`))
	fmt.Println(err)
	// Output:
	// 10 2s
	// 4 45s
	// executor: config: dependencies.payments.invocationTimeout: time: missing unit in duration "30"
}
