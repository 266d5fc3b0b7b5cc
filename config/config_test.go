package config_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/config"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/throttle"
)

func newGroup(t *testing.T, cfg executor.GroupConfig) *executor.Group {
	t.Helper()
	g, err := executor.NewGroup(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close(context.Background())) })
	return g
}

// The example file loads, and means what its comments say.
func TestLoadExampleConfig(t *testing.T) {
	cfg, err := config.Load(filepath.Join("..", "examples", "config.json"))
	require.NoError(t, err)
	def := executor.Config{Slots: 10, InvocationTimeout: 2 * time.Second, Breaker: breaker.Config{
		ConsecutiveFailures: 5, FailureRate: 0.5, MinimumCalls: 20, WindowDuration: time.Minute, ResetTimeout: 5 * time.Second,
	}}
	payments, reports, search := def, def, def
	payments.Slots, payments.InvocationTimeout = 4, 30*time.Second
	payments.Breaker.ResetTimeout, payments.Breaker.MaxResetTimeout, payments.Breaker.ResetJitter = 45*time.Second, 5*time.Minute, 0.2
	reports.Slots, reports.Queue, reports.QueueTimeout, reports.LowWater, reports.InvocationTimeout = 2, 100, 10*time.Second, 50, 20*time.Second
	reports.Breaker.ResetTimeout = time.Minute
	search.Slots, search.InvocationTimeout = 20, 800*time.Millisecond
	search.Breaker.SlowCallRate, search.Breaker.SlowCallDuration = 0.8, 500*time.Millisecond
	search.Breaker.FailureRate = 0 // written as 0: the default's failure-rate rule is off
	assert.Equal(t, executor.GroupConfig{
		Default:     def,
		Suppliers:   map[string]executor.Config{"payments": payments, "reports": reports, "search": search},
		IdleTimeout: 10 * time.Minute,
	}, cfg)

	g := newGroup(t, cfg)
	for name, want := range map[string][2]int{"payments": {4, 0}, "reports": {2, 100}, "search": {20, 0}, "catalog": {10, 0}} {
		ex, err := g.Executor(name)
		require.NoError(t, err)
		st := ex.Stats()
		assert.Equal(t, want[0], st.Slots, "%s: slots", name)
		assert.Equal(t, want[1], st.QueueCap, "%s: queue", name)
	}
}

func TestParseFields(t *testing.T) {
	t.Run("every field reaches its Go field", func(t *testing.T) {
		cfg, err := config.Parse([]byte(`{
			"default": {
				"slots": 3, "queue": 8, "queueTimeout": "2s", "lowWater": 2, "invocationTimeout": "1.5s",
				"breaker": {
					"consecutiveFailures": -1, "failureRate": 0.25, "slowCallRate": 0.5, "slowCallDuration": "700ms",
					"minimumCalls": 7, "windowDuration": "30s", "windowBuckets": 6, "resetTimeout": "4s",
					"maxResetTimeout": "1m", "resetJitter": 0.1, "halfOpenProbes": 3
				},
				"stuck": {"multiple": 6, "minAge": "300ms", "maxAge": "700ms", "tripOnAnySaturation": true}
			},
			"idleTimeout": "90s"
		}`))
		require.NoError(t, err)
		assert.Equal(t, executor.GroupConfig{
			Default: executor.Config{Slots: 3, Queue: 8, QueueTimeout: 2 * time.Second, LowWater: 2, InvocationTimeout: 1500 * time.Millisecond,
				Breaker: breaker.Config{
					ConsecutiveFailures: -1, FailureRate: 0.25, SlowCallRate: 0.5, SlowCallDuration: 700 * time.Millisecond,
					MinimumCalls: 7, WindowDuration: 30 * time.Second, WindowBuckets: 6, ResetTimeout: 4 * time.Second,
					MaxResetTimeout: time.Minute, ResetJitter: 0.1, HalfOpenProbes: 3,
				},
				Stuck: executor.StuckConfig{Multiple: 6, MinAge: 300 * time.Millisecond, MaxAge: 700 * time.Millisecond, TripOnAnySaturation: true}},
			IdleTimeout: 90 * time.Second,
		}, cfg)
	})

	t.Run("a supplier's stuck settings replace the default's one by one", func(t *testing.T) {
		cfg, err := config.Parse([]byte(`{"default": {"invocationTimeout": "10s", "breaker": {"resetTimeout": "15s"}, "stuck": {"multiple": 6, "maxAge": "4s"}},
			"suppliers": {"a": {"stuck": {"minAge": "1s"}}}}`))
		require.NoError(t, err)
		assert.Equal(t, executor.StuckConfig{Multiple: 6, MinAge: time.Second, MaxAge: 4 * time.Second}, cfg.Suppliers["a"].Stuck)
	})

	t.Run("a count window and strict", func(t *testing.T) {
		cfg, err := config.Parse([]byte(`{"default": {"breaker": {"failureRate": 0.5, "windowSize": 40}},
			"suppliers": {"a": {}}, "strict": true}`))
		require.NoError(t, err)
		assert.Equal(t, 40, cfg.Default.Breaker.WindowSize)
		assert.True(t, cfg.Strict)
	})

	t.Run("shadow mode per supplier, and the cap on suppliers", func(t *testing.T) {
		cfg, err := config.Parse([]byte(`{"default": {"shadow": true}, "suppliers": {"a": {"shadow": false}}, "maxSuppliers": 500}`))
		require.NoError(t, err)
		assert.True(t, cfg.Default.Shadow)
		assert.False(t, cfg.Suppliers["a"].Shadow, "an explicit false replaces the default's")
		assert.Equal(t, 500, cfg.MaxSuppliers)
	})

	t.Run("an adaptive limit per supplier", func(t *testing.T) {
		cfg, err := config.Parse([]byte(`{"default": {"adaptive": {"max": 64, "min": 4}}, "suppliers": {"a": {"adaptive": {"max": 32}}}}`))
		require.NoError(t, err)
		assert.Equal(t, executor.AdaptiveConfig{Max: 64, Min: 4}, cfg.Default.Adaptive)
		assert.Equal(t, executor.AdaptiveConfig{Max: 32, Min: 4}, cfg.Suppliers["a"].Adaptive, "the other fields come from the default")
	})

	t.Run("a critical share per supplier", func(t *testing.T) {
		cfg, err := config.Parse([]byte(`{"default": {"criticalShare": 0.25}, "suppliers": {"a": {"criticalShare": 0}}}`))
		require.NoError(t, err)
		assert.Equal(t, 0.25, cfg.Default.CriticalShare)
		assert.Zero(t, cfg.Suppliers["a"].CriticalShare, "an explicit 0 replaces the default's")
	})

	t.Run("a supplier takes the default's fields and replaces those it sets", func(t *testing.T) {
		cfg, err := config.Parse([]byte(`{
			"default": {"slots": 8, "queue": 4, "invocationTimeout": "2s", "breaker": {"consecutiveFailures": 3, "resetTimeout": "10s"}},
			"suppliers": {"payments": {"slots": 2, "breaker": {"resetTimeout": "45s"}}}
		}`))
		require.NoError(t, err)
		assert.Equal(t, executor.Config{Slots: 2, Queue: 4, InvocationTimeout: 2 * time.Second,
			Breaker: breaker.Config{ConsecutiveFailures: 3, ResetTimeout: 45 * time.Second}}, cfg.Suppliers["payments"])
	})

	t.Run("an explicit zero in a supplier means zero", func(t *testing.T) {
		cfg, err := config.Parse([]byte(`{
			"default": {"queue": 100, "queueTimeout": "1s", "lowWater": 10, "breaker": {"consecutiveFailures": 3, "failureRate": 0.5}},
			"suppliers": {"direct": {"queue": 0, "queueTimeout": "0s", "lowWater": 0, "breaker": {"failureRate": 0}}}
		}`))
		require.NoError(t, err)
		direct := cfg.Suppliers["direct"]
		assert.Zero(t, direct.Queue, "no queue, although the default has one")
		assert.Zero(t, direct.QueueTimeout)
		assert.Zero(t, direct.Breaker.FailureRate, "no rate rule, although the default has one")
		assert.Equal(t, 3, direct.Breaker.ConsecutiveFailures, "what it leaves out is the default's")

		g := newGroup(t, cfg)
		ex, err := g.Executor("direct")
		require.NoError(t, err)
		assert.Zero(t, ex.Stats().QueueCap, "the running executor has no queue")
		other, err := g.Executor("other")
		require.NoError(t, err)
		assert.Equal(t, 100, other.Stats().QueueCap)
	})

	t.Run("an empty object is the zero GroupConfig", func(t *testing.T) {
		cfg, err := config.Parse([]byte(`{}`))
		require.NoError(t, err)
		assert.Equal(t, executor.GroupConfig{}, cfg)
	})

	t.Run("null and comments count as absent", func(t *testing.T) {
		cfg, err := config.Parse([]byte(`{"//": "top", "default": {"//why": "x", "slots": null, "queue": 4},
			"suppliers": {"//": "no supplier is called that", "a": {"slots": 2}, "b": null}}`))
		require.NoError(t, err)
		assert.Equal(t, executor.GroupConfig{
			Default:   executor.Config{Queue: 4},
			Suppliers: map[string]executor.Config{"a": {Slots: 2, Queue: 4}},
		}, cfg)
	})
}

func TestParseErrors(t *testing.T) {
	// The validation errors are New's own.
	_, errNew := executor.New("default", executor.Config{InvocationTimeout: 5 * time.Second})
	require.Error(t, errNew)

	tests := []struct {
		name string
		json string
		want []string
	}{
		{"a malformed duration names its field", `{"suppliers": {"payments": {"invocationTimeout": "30 s"}}}`,
			[]string{`config: suppliers.payments.invocationTimeout: want a duration such as "250ms", "30s" or "1m30s", got "30 s"`}},
		{"a duration must be a string", `{"default": {"invocationTimeout": 30}}`,
			[]string{`config: default.invocationTimeout: want a duration string such as "30s", got 30`}},
		{"an unknown field lists the known ones", `{"default": {"slotz": 3}}`,
			[]string{"config: default.slotz: unknown field (known: slots, queue, queueTimeout, lowWater, invocationTimeout, breaker, stuck, shadow, criticalShare, adaptive, throttle)"}},
		{"names are matched exactly", `{"default": {"Slots": 3}}`,
			[]string{`config: default.Slots: unknown field (did you mean "slots"?)`}},
		{"the old key workers names its new name", `{"default": {"workers": 4}}`,
			[]string{`config: default.workers: renamed: write "slots" instead`}},
		{"the old key workers is refused in a supplier too", `{"suppliers": {"payments": {"workers": 4}}}`,
			[]string{`config: suppliers.payments.workers: renamed: write "slots" instead`}},
		{"the old key dependencies names its new name", `{"dependencies": {"payments": {"slots": 4}}}`,
			[]string{`config: dependencies: renamed: write "suppliers" instead`}},
		{"an old key is renamed only where the new one belongs", `{"default": {"dependencies": {}}}`,
			[]string{"config: default.dependencies: unknown field (known: slots,"}},
		{"a func cannot come from a file", `{"default": {"breaker": {"classify": "5xx"}}}`,
			[]string{"config: default.breaker.classify: cannot come from a file: Breaker.Classify is a func"}},
		{"error kinds cannot come from a file", `{"default": {"breaker": {"errorKinds": []}}}`,
			[]string{"config: default.breaker.errorKinds: cannot come from a file"}},
		{"a count must be an integer", `{"default": {"slots": "ten"}}`,
			[]string{`config: default.slots: want an integer, got the string "ten"`}},
		{"a fraction is not an integer", `{"default": {"slots": 2.5}}`, []string{"config: default.slots: want an integer, got 2.5"}},
		{"a huge count is out of range", `{"default": {"slots": 1e400}}`,
			[]string{"config: default.slots: want an integer, got 1e400, which is out of range"}},
		{"a count just past int64 is out of range", `{"default": {"slots": 9223372036854775808}}`,
			[]string{"config: default.slots: want an integer, got 9223372036854775808, which is out of range"}},
		{"a whole count written with an exponent or a fraction is not out of range", `{"default": {"slots": 1e3, "queue": 4.0}}`,
			[]string{"config: default.slots: want an integer, got 1e3, which must be written as a whole number: 1000",
				"config: default.queue: want an integer, got 4.0, which must be written as a whole number: 4"}},
		{"whole or not, exactly as written", `{"default": {"lowWater": 1e-400, "slots": 4.0000000000000000001, "queue": 9223372036854775807.0}}`,
			[]string{"config: default.slots: want an integer, got 4.0000000000000000001\n",
				"config: default.queue: want an integer, got 9223372036854775807.0, which must be written as a whole number: 9223372036854775807",
				"config: default.lowWater: want an integer, got 1e-400\n"}},
		{"a number too long to be a setting", `{"suppliers": {"payments": {"breaker": {"failureRate": 0.` + strings.Repeat("5", 100) + `}}}}`,
			[]string{"config: suppliers.payments.breaker.failureRate: want a number, got a number 102 characters long (at most 100)"}},
		{"a huge rate is out of range, in the user's words", `{"default": {"breaker": {"failureRate": 1e400}}}`,
			[]string{"config: default.breaker.failureRate: want a number, got 1e400, which is out of range"}},
		{"a rate must be a number", `{"default": {"breaker": {"failureRate": "half"}}}`,
			[]string{`config: default.breaker.failureRate: want a number, got the string "half"`}},
		{"strict is true or false", `{"strict": "yes"}`, []string{`config: strict: want true or false, got the string "yes"`}},
		{"a duplicate key is refused, naming it", `{"default": {"slots": 3, "slots": 4}}`,
			[]string{`config: default.slots: the key "slots" appears twice in this object`}},
		{"a duplicate supplier is refused, naming it", `{"suppliers": {"payments": {}, "payments": {"slots": 1}}}`,
			[]string{`config: suppliers.payments: the key "payments" appears twice in this object`}},
		{"an object must be an object", `{"suppliers": []}`, []string{"config: suppliers: want an object, got an array"}},
		{"a number is not an object", `{"default": {"breaker": 5}}`, []string{"config: default.breaker: want an object, got 5"}},
		{"an object is not a number", `{"default": {"slots": {"n": 3}}, "idleTimeout": [1]}`,
			[]string{"config: default.slots: want an integer, got an object", `config: idleTimeout: want a duration string such as "30s", got an array`}},
		{"the document must be an object", `[1]`, []string{"config: top level: want an object, got an array"}},
		{"a host name key is quoted in the path", `{"suppliers": {"api.example.com:443": {"timeout": "1s"}}}`,
			[]string{`config: suppliers["api.example.com:443"].timeout: unknown field`}},
		{"every problem is reported at once", `{"idleTimeout": "soon", "default": {"queue": true}}`,
			[]string{`config: idleTimeout: want a duration such as "250ms", "30s" or "1m30s", got "soon"`, "config: default.queue: want an integer, got true"}},
		{"a syntax error has its line and column", "{\n  \"default\": {\"slots\": 3,}\n}",
			[]string{"config: line 2, column 26: invalid character '}'"}},
		{"a syntax error inside a comment has its line and column", "{\n \"//\": [1,}\n}",
			[]string{"config: line 2, column 11: invalid character '}' looking for beginning of value"}},
		{"an empty document", "", []string{"config: empty document"}},
		{"a truncated document", `{"default": {"slots": 3`, []string{"config: unexpected end of the document"}},
		{"data after the object", `{} {}`, []string{"config: unexpected data after the top-level object"}},
		{"a stray brace after the object", `{} }`, []string{"config: unexpected data after the top-level object"}},
		{"a syntax error on the first line", `{"default": {"slots": 3 "queue": 1}}`, []string{"config: line 1, column 25: invalid character '\"' after object key:value pair"}},
		{"null is not a configuration", `null`, []string{"config: top level: want an object, got null"}},
		{"validation: the errors of New", `{"default": {"invocationTimeout": "5s"}}`, []string{"config: " + errNew.Error()}},
		{"validation: a supplier's error names it", `{"suppliers": {"reports": {"queue": 10, "lowWater": 10}}}`,
			[]string{"executor: reports: LowWater (10) must be below Queue (10)"}},
		{"validation: breaker rules are checked too, by supplier", `{"suppliers": {"search": {"breaker": {"failureRate": 2}}}}`,
			[]string{"executor: search: breaker: FailureRate must be in (0, 1]"}},
		{"validation: a default breaker rule", `{"default": {"breaker": {"resetJitter": 3}}}`,
			[]string{"executor: default: breaker: ResetJitter"}},
		{"validation: group fields", `{"idleTimeout": "-1s"}`, []string{"IdleTimeout must be ≥ 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tt.json))
			require.Error(t, err)
			assert.Zero(t, cfg)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotRegexp(t, `int64|float64|config\.|executor\.Config|struct|Go `, err.Error(), "errors speak of the file, not of Go types")
		})
	}
}

// A number far longer than any setting needs is refused before it is
// read: deciding whether a million-digit mantissa is whole took seconds.
// The error names the field, and does not repeat the number.
func TestALongNumberIsRefusedUnread(t *testing.T) {
	_, err := config.Parse([]byte(`{"default": {"slots": 1.` + strings.Repeat("0", 1_000_000) + `1}}`))
	require.Error(t, err)
	require.Less(t, len(err.Error()), 200, "the error does not repeat the number")
	require.EqualError(t, err, "config: default.slots: want an integer, got a number 1000003 characters long (at most 100)")
}

func TestLoad(t *testing.T) {
	t.Run("a missing file is a not-exist error", func(t *testing.T) {
		_, err := config.Load(filepath.Join(t.TempDir(), "nope.json"))
		require.ErrorIs(t, err, fs.ErrNotExist)
	})

	t.Run("errors start with the file's path", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fusebox.json")
		require.NoError(t, os.WriteFile(path, []byte(`{"default": {"slots": -1}}`), 0o600))
		_, err := config.Load(path)
		require.Error(t, err)
		assert.Regexp(t, `^.*fusebox\.json: config: executor: default: Slots must be ≥ 1`, err.Error())
	})
}

// A Group inside a program's own JSON configuration is read as strictly,
// by encoding/json.
func TestGroupInsideALargerJSONDocument(t *testing.T) {
	var file struct {
		Listen  string       `json:"listen"`
		Fusebox config.Group `json:"fusebox"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"listen": ":8080", "fusebox": {"default": {"slots": 4}}}`), &file))
	cfg, err := file.Fusebox.GroupConfig()
	require.NoError(t, err)
	assert.Equal(t, 4, cfg.Default.Slots)

	err = json.Unmarshal([]byte(`{"fusebox": {"default": {"slots": 4, "slots": 5}}}`), &file)
	assert.ErrorContains(t, err, `config: default.slots: the key "slots" appears twice`)
}

// Writing a Group gives the file back: durations as text, left-out fields
// left out.
func TestMarshalGroup(t *testing.T) {
	in := `{"default":{"slots":4,"invocationTimeout":"1m30s","breaker":{"resetTimeout":"2m0s"}},"suppliers":{"a":{"queue":0,"breaker":{}}}}`
	var g config.Group
	require.NoError(t, json.Unmarshal([]byte(in), &g))
	out, err := json.Marshal(g)
	require.NoError(t, err)
	assert.JSONEq(t, in, string(out))
}

// The field list is written once: each field of the file types is the Go
// field of the same name, and every field of executor.Config and
// breaker.Config that is data has its counterpart in a file. A field added
// to either fails here until the file types have it too (or it is listed
// as code-only).
func TestTheFileTypesMirrorTheGoTypes(t *testing.T) {
	codeOnly := map[string]bool{"Name": true, "ErrorKinds": true, "Classify": true, "ReadyToTrip": true, "OnTransition": true, "OnBusy": true, "OnChange": true}
	durationT := reflect.TypeFor[time.Duration]()
	pairs := []struct{ file, code reflect.Type }{
		{reflect.TypeFor[config.Executor](), reflect.TypeFor[executor.Config]()},
		{reflect.TypeFor[config.Breaker](), reflect.TypeFor[breaker.Config]()},
		{reflect.TypeFor[config.Stuck](), reflect.TypeFor[executor.StuckConfig]()},
		{reflect.TypeFor[config.Adaptive](), reflect.TypeFor[executor.AdaptiveConfig]()},
	}
	for _, p := range pairs {
		var fileNames []string
		for i := range p.file.NumField() {
			f := p.file.Field(i)
			fileNames = append(fileNames, f.Name)
			g, ok := p.code.FieldByName(f.Name)
			if !assert.True(t, ok, "%s.%s has no field %s in %s", p.file, f.Name, f.Name, p.code) {
				continue
			}
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft == reflect.TypeFor[config.Duration]():
				assert.Equal(t, durationT, g.Type, "%s.%s", p.file, f.Name)
			case ft.Kind() == reflect.Struct:
				gt := g.Type
				if gt.Kind() == reflect.Pointer {
					gt = gt.Elem()
				}
				assert.Equal(t, reflect.Struct, gt.Kind(), "%s.%s", p.file, f.Name)
			default:
				assert.Equal(t, g.Type, ft, "%s.%s", p.file, f.Name)
			}
			tag := f.Tag.Get("json")
			assert.NotEmpty(t, tag, "%s.%s needs a json tag", p.file, f.Name)
			assert.NotEmpty(t, f.Tag.Get("yaml"), "%s.%s needs a yaml tag", p.file, f.Name)
		}
		for i := range p.code.NumField() {
			g := p.code.Field(i)
			if g.IsExported() && !codeOnly[g.Name] {
				assert.True(t, slices.Contains(fileNames, g.Name), "%s.%s cannot be set from a file: add it to %s", p.code, g.Name, p.file)
			}
		}
	}
	// And the group's data fields.
	for _, name := range []string{"Default", "Suppliers", "IdleTimeout", "Strict", "MaxSuppliers"} {
		_, ok := reflect.TypeFor[config.Group]().FieldByName(name)
		assert.True(t, ok, name)
	}
	for i := range reflect.TypeFor[executor.GroupConfig]().NumField() {
		g := reflect.TypeFor[executor.GroupConfig]().Field(i)
		if g.Type.Kind() == reflect.Func || g.Name == "Runner" {
			continue
		}
		_, ok := reflect.TypeFor[config.Group]().FieldByName(g.Name)
		assert.True(t, ok, "executor.GroupConfig.%s cannot be set from a file: add it to config.Group", g.Name)
	}
}

func TestExecutorConfig(t *testing.T) {
	var e config.Executor
	require.NoError(t, json.Unmarshal([]byte(`{"slots": 4, "invocationTimeout": "3s", "breaker": {"resetTimeout": "5s"}}`), &e))
	assert.Equal(t, executor.Config{Slots: 4, InvocationTimeout: 3 * time.Second, Breaker: breaker.Config{ResetTimeout: 5 * time.Second}}, e.Config())
}

func TestAThrottleSectionTurnsThrottlingOn(t *testing.T) {
	cfg, err := config.Parse([]byte(`{
		"default": {"throttle": {}},
		"suppliers": {"search": {"throttle": {"window": "5s", "minRequests": 50}}}
	}`))
	require.NoError(t, err)
	require.NotNil(t, cfg.Default.Throttle, "an empty section turns it on with the defaults")
	assert.Equal(t, throttle.Config{}, *cfg.Default.Throttle)
	s := cfg.Suppliers["search"].Throttle
	require.NotNil(t, s)
	assert.Equal(t, throttle.Config{Window: 5 * time.Second, MinRequests: 50}, *s)
	_, err = executor.NewGroup(cfg)
	require.NoError(t, err)

	none, err := config.Parse([]byte(`{"default": {"slots": 4}}`))
	require.NoError(t, err)
	assert.Nil(t, none.Default.Throttle, "no section, no throttle")
}

// The default cap on the executors a group makes, as Group.MaxSuppliers's
// documentation gives it, is the one the group applies: that many names
// each get an executor of their own, and the next shares an overflow one.
func TestTheDocumentedMaxSuppliersDefaultHolds(t *testing.T) {
	src, err := os.ReadFile("config.go")
	require.NoError(t, err)
	doc := string(src)
	_, doc, ok := strings.Cut(doc, "MaxSuppliers is executor.GroupConfig.MaxSuppliers")
	require.True(t, ok)
	_, doc, ok = strings.Cut(doc, "Left out: ")
	require.True(t, ok)
	figure, _, _ := strings.Cut(doc, ".")
	n, err := strconv.Atoi(strings.ReplaceAll(figure, ",", ""))
	require.NoError(t, err, "the documented default %q", figure)

	cfg, err := config.Group{}.GroupConfig()
	require.NoError(t, err)
	g := newGroup(t, cfg)
	for i := range n {
		_, err := g.Executor("s" + strconv.Itoa(i))
		require.NoError(t, err)
	}
	_, own := g.Lookup("s" + strconv.Itoa(n-1))
	assert.True(t, own, "name %d of the documented default %d has no executor of its own", n, n)
	_, err = g.Executor("one-more")
	require.NoError(t, err)
	_, own = g.Lookup("one-more")
	assert.False(t, own, "a name beyond the documented default %d got an executor of its own", n)
}
