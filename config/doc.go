// Package config reads the configuration of an executor.Group from a file:
// the defaults, the per-supplier settings and the group's own, with
// durations written as Go writes them ("250ms", "30s", "1m30s").
//
//	{
//	  "default": {"slots": 10, "invocationTimeout": "2s", "breaker": {"resetTimeout": "5s"}},
//	  "suppliers": {
//	    "payments": {"slots": 4, "invocationTimeout": "30s", "breaker": {"resetTimeout": "45s"}},
//	    "reports": {"queue": 0}
//	  },
//	  "idleTimeout": "10m"
//	}
//
// Load and Parse read JSON and return the executor.GroupConfig it
// describes, validated with the errors of executor.NewGroup; what a file
// cannot hold (OnTransition, Runner, OnBusy, a breaker's Classify and
// ErrorKinds) is set on the result in code:
//
//	cfg, err := config.Load("fusebox.json")
//	if err != nil {
//		return err // every problem at once, e.g. suppliers.payments.slots: want an integer, got the string "four"
//	}
//	cfg.OnTransition = executor.LogTransitions(slog.Default())
//	g, err := executor.NewGroup(cfg)
//
// A supplier writes only what differs from "default": each field it
// sets replaces the default's, an explicit zero included ("queue": 0 is no
// queue), and each field it leaves out is the default's. The keys are
// those of the types Group, Executor, Breaker and Stuck, which mirror
// executor.GroupConfig, executor.Config, breaker.Config and
// executor.StuckConfig field by field: see those for what each field means
// and what leaving it out means.
//
// JSON is read strictly: keys are matched exactly, and unknown keys,
// duplicate keys, values of the wrong type and malformed durations are
// errors naming the key by its path, all of them at once. Keys that start
// with "//" are comments. A document longer than MaxSize, or nested deeper
// than MaxDepth (comments included), is refused.
//
// # Other formats
//
// The types carry json and yaml tags and their durations are
// encoding.TextUnmarshaler, so fusebox's settings can be a part of a
// program's own configuration file in YAML, TOML or any format whose
// decoder honours those. TOML decoders and mapstructure (behind viper and
// koanf) match the key names regardless of case; mapstructure reads a
// Duration only with mapstructure.TextUnmarshallerHookFunc among its
// decode hooks. With a YAML library:
//
//	var file struct {
//		Listen  string       `yaml:"listen"`
//		Fusebox config.Group `yaml:"fusebox"`
//	}
//	dec := yaml.NewDecoder(f)
//	dec.KnownFields(true) // refuse unknown keys in YAML too
//	if err := dec.Decode(&file); err != nil {
//		return err
//	}
//	cfg, err := file.Fusebox.GroupConfig()
//
// Within a larger JSON document decoded by encoding/json, a Group is read
// strictly too, by its UnmarshalJSON.
package config
