package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// ParseGroupConfig reads a GroupConfig from JSON: the data parts of it,
// with durations written the way time.ParseDuration reads them ("250ms",
// "30s", "1m30s"):
//
//	{
//	  "default": {"workers": 10, "invocationTimeout": "2s", "breaker": {"resetTimeout": "5s"}},
//	  "dependencies": {
//	    "payments": {"workers": 4, "invocationTimeout": "30s", "breaker": {"resetTimeout": "45s"}}
//	  },
//	  "idleTimeout": "10m"
//	}
//
// A Config is "workers", "queue", "queueTimeout", "lowWater",
// "invocationTimeout" and "breaker"; a breaker is "consecutiveFailures",
// "failureRate", "slowCallRate", "slowCallDuration", "minimumCalls",
// "windowSize", "windowDuration", "windowBuckets", "resetTimeout",
// "maxResetTimeout", "resetJitter" and "halfOpenProbes". Each means what its
// Go field means, and an absent field is the field's zero value, so in a
// dependency it inherits the default. Keys that start with "//" are
// comments, anywhere.
//
// Field names are matched exactly. Unknown fields, values of the wrong type
// and malformed durations are errors that name the field by its path, such
// as dependencies.payments.invocationTimeout, all of them at once. Then the
// configuration is validated with the same errors as NewGroup and New,
// cross-field rules included (the reset timeout must exceed the invocation
// timeout).
//
// Functions cannot come from a file: Breaker.Classify,
// Breaker.OnTransition, Breaker.ErrorKinds (whose rules match errors with
// a func), GroupConfig.OnTransition and GroupConfig.Runner are left nil; set
// them on the result in code. Breaker.Name is left empty, so each breaker
// is named after its dependency.
func ParseGroupConfig(data []byte) (GroupConfig, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return GroupConfig{}, fmt.Errorf("executor: config: %w", syntaxError(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return GroupConfig{}, errors.New("executor: config: unexpected data after the top-level object")
	}
	var errs []error
	tree = check("", tree, reflect.TypeFor[groupFile](), &errs)
	if len(errs) > 0 {
		return GroupConfig{}, errors.Join(errs...)
	}
	// The tree is known good now: let encoding/json fill the structs.
	clean, err := json.Marshal(tree)
	if err != nil {
		return GroupConfig{}, fmt.Errorf("executor: config: %w", err)
	}
	var f groupFile
	if err := json.Unmarshal(clean, &f); err != nil {
		return GroupConfig{}, fmt.Errorf("executor: config: %w", err)
	}
	cfg := f.groupConfig()
	if err := cfg.Validate(); err != nil {
		return GroupConfig{}, err
	}
	return cfg, nil
}

// LoadGroupConfig reads the file at path and parses it with
// ParseGroupConfig; errors start with the path.
func LoadGroupConfig(path string) (GroupConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return GroupConfig{}, err
	}
	cfg, err := ParseGroupConfig(data)
	if err != nil {
		return GroupConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// The file's shape. Durations are strings here, checked by check and
// parsed by conversion.
type (
	groupFile struct {
		Default      configFile            `json:"default"`
		Dependencies map[string]configFile `json:"dependencies"`
		IdleTimeout  duration              `json:"idleTimeout"`
	}
	configFile struct {
		Workers           int         `json:"workers"`
		Queue             int         `json:"queue"`
		QueueTimeout      duration    `json:"queueTimeout"`
		LowWater          int         `json:"lowWater"`
		InvocationTimeout duration    `json:"invocationTimeout"`
		Breaker           breakerFile `json:"breaker"`
	}
	breakerFile struct {
		ConsecutiveFailures int      `json:"consecutiveFailures"`
		FailureRate         float64  `json:"failureRate"`
		SlowCallRate        float64  `json:"slowCallRate"`
		SlowCallDuration    duration `json:"slowCallDuration"`
		MinimumCalls        int      `json:"minimumCalls"`
		WindowSize          int      `json:"windowSize"`
		WindowDuration      duration `json:"windowDuration"`
		WindowBuckets       int      `json:"windowBuckets"`
		ResetTimeout        duration `json:"resetTimeout"`
		MaxResetTimeout     duration `json:"maxResetTimeout"`
		ResetJitter         float64  `json:"resetJitter"`
		HalfOpenProbes      int      `json:"halfOpenProbes"`
	}
	// duration is a time.ParseDuration string, already checked.
	duration string
)

// codeOnly are the fields that exist in Go but cannot come from a file.
var codeOnly = map[string]string{
	"classify":     "Breaker.Classify is a func: set it in code",
	"onTransition": "OnTransition is a func: set it in code",
	"errorKinds":   "Breaker.ErrorKinds match errors with a func: set them in code",
	"name":         "Breaker.Name defaults to the dependency's name and cannot be set in a file",
}

func (d duration) value() time.Duration {
	if d == "" {
		return 0
	}
	v, _ := time.ParseDuration(string(d)) // checked already
	return v
}

func (f groupFile) groupConfig() GroupConfig {
	cfg := GroupConfig{
		Default:     f.Default.config(),
		IdleTimeout: f.IdleTimeout.value(),
	}
	if f.Dependencies != nil {
		cfg.Dependencies = make(map[string]Config, len(f.Dependencies))
		for name, c := range f.Dependencies {
			cfg.Dependencies[name] = c.config()
		}
	}
	return cfg
}

func (c configFile) config() Config {
	b := c.Breaker
	return Config{
		Workers: c.Workers, Queue: c.Queue, QueueTimeout: c.QueueTimeout.value(), LowWater: c.LowWater,
		InvocationTimeout: c.InvocationTimeout.value(),
		Breaker: breaker.Config{
			ConsecutiveFailures: b.ConsecutiveFailures,
			FailureRate:         b.FailureRate, SlowCallRate: b.SlowCallRate,
			SlowCallDuration: b.SlowCallDuration.value(),
			MinimumCalls:     b.MinimumCalls, WindowSize: b.WindowSize,
			WindowDuration: b.WindowDuration.value(), WindowBuckets: b.WindowBuckets,
			ResetTimeout: b.ResetTimeout.value(), MaxResetTimeout: b.MaxResetTimeout.value(),
			ResetJitter: b.ResetJitter, HalfOpenProbes: b.HalfOpenProbes,
		},
	}
}

// check walks the decoded JSON value v against the Go type t that it is to
// fill, reporting every problem with its path, and returns v without its
// comments and nulls.
func check(path string, v any, t reflect.Type, errs *[]error) any {
	bad := func(format string, args ...any) {
		where := path
		if where == "" {
			where = "top level"
		}
		*errs = append(*errs, fmt.Errorf("executor: config: %s: "+format, append([]any{where}, args...)...))
	}
	if t == reflect.TypeFor[duration]() {
		s, ok := v.(string)
		if !ok {
			bad("want a duration string such as \"30s\", got %s", describe(v))
		} else if _, err := time.ParseDuration(s); err != nil {
			bad("%v", err)
		}
		return v
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			bad("want an object, got %s", describe(v))
			return v
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if strings.HasPrefix(k, "//") || m[k] == nil {
				delete(m, k) // a comment, or null: absent
				continue
			}
			p := join(path, k, t.Kind() == reflect.Map)
			if t.Kind() == reflect.Map {
				m[k] = check(p, m[k], t.Elem(), errs)
				continue
			}
			f, ok := field(t, k)
			if !ok {
				unknown(p, k, t, errs)
				continue
			}
			m[k] = check(p, m[k], f.Type, errs)
		}
	case reflect.Int:
		if n, ok := v.(json.Number); !ok {
			bad("want an integer, got %s", describe(v))
		} else if _, err := n.Int64(); err != nil {
			bad("want an integer, got %s", n)
		}
	case reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			bad("want a number, got %s", describe(v))
		}
	}
	return v
}

// field finds the struct field whose json name is exactly k.
func field(t reflect.Type, k string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); f.Tag.Get("json") == k {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// unknown reports an unknown field, with a hint where one helps.
func unknown(path, k string, t reflect.Type, errs *[]error) {
	msg := "unknown field"
	if why, ok := codeOnly[k]; ok {
		msg = "cannot come from a file: " + why
	} else {
		var names []string
		for i := range t.NumField() {
			name := t.Field(i).Tag.Get("json")
			if strings.EqualFold(name, k) {
				msg = fmt.Sprintf("unknown field (did you mean %q?)", name)
			}
			names = append(names, name)
		}
		if msg == "unknown field" {
			msg += " (known: " + strings.Join(names, ", ") + ")"
		}
	}
	*errs = append(*errs, fmt.Errorf("executor: config: %s: %s", path, msg))
}

// join extends a path: dependencies.payments, or dependencies["api.example.com:443"]
// for a map key that would not read as one name.
func join(path, k string, isMapKey bool) string {
	switch {
	case isMapKey && (k == "" || strings.ContainsAny(k, ".[]\" ")):
		return fmt.Sprintf("%s[%q]", path, k)
	case path == "":
		return k
	}
	return path + "." + k
}

func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "the number " + v.String()
	case bool:
		return fmt.Sprintf("%t", v)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", v)
}

// syntaxError adds the line and column to a JSON syntax error.
func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if errors.Is(err, io.EOF) {
			return errors.New("empty document")
		}
		return err
	}
	// Offset counts the bytes read, the offending one included.
	before := data[:min(max(int(se.Offset)-1, 0), len(data))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}
