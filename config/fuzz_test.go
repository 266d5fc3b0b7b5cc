package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fusebox-go/fusebox/config"
)

// FuzzParse feeds the decoder any bytes: it must not panic, must refuse
// what is not JSON and what passes its limits, and what it accepts must
// survive being written and read again unchanged.
func FuzzParse(f *testing.F) {
	if example, err := os.ReadFile(filepath.Join("..", "examples", "config.json")); err == nil {
		f.Add(example)
	}
	for _, s := range []string{
		`{}`, `null`, `[1]`, `{"//": [[{"a": "}"}]]}`,
		`{"default": {"slots": 4, "queue": 10, "lowWater": 5, "invocationTimeout": "1m30s", "breaker": {"resetTimeout": "2m", "failureRate": 0.5}}}`,
		`{"suppliers": {"api.example.com:443": {"slots": 2, "stuck": {"multiple": 3}}, "b": null}, "idleTimeout": "10m", "strict": false}`,
		`{"default": {"slots": 1e3, "queue": 4.0, "adaptive": {"max": 50}}}`,
		`{"default": {"slots": 3, "slots": 4}}`,
		`{"default": {"criticalShare": -0, "shadow": true, "breaker": {"halfOpenProbes": 2}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var g config.Group
		err := g.UnmarshalJSON(data)
		if err != nil {
			return
		}
		switch {
		case len(data) > config.MaxSize:
			t.Fatalf("accepted %d bytes, more than MaxSize", len(data))
		case !json.Valid(data):
			t.Fatalf("accepted a document that is not JSON: %q", data)
		}
		out, err := json.Marshal(g)
		if err != nil {
			t.Fatalf("cannot write what was read: %v", err)
		}
		var again config.Group
		if err := again.UnmarshalJSON(out); err != nil {
			t.Fatalf("cannot read what was written (%s): %v", out, err)
		}
		if len(g.Suppliers) == 0 {
			g.Suppliers = nil // {} is written as nothing
		}
		if !reflect.DeepEqual(g, again) {
			t.Fatalf("read %q, wrote %s, read back something else", data, out)
		}
		_, _ = config.Parse(data) // validation: no panic, whatever the values
	})
}
