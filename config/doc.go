// Package config reads the configuration of an executor.Group from a file:
// the defaults, the per-supplier settings and the group's own, durations
// written as Go writes them ("250ms", "30s").
//
//	{"default": {"slots": 10, "invocationTimeout": "2s"},
//	 "suppliers": {"payments": {"slots": 4, "invocationTimeout": "30s"}}}
//
// Load and Parse return the executor.GroupConfig a JSON document describes,
// validated as executor.NewGroup validates it; unknown keys, duplicates,
// wrong types and bad values are errors naming each key by its path, all at
// once, and documents over MaxSize or MaxDepth are refused. A supplier
// writes only what differs from "default". The types carry json and yaml
// tags, so the settings can be a section of a program's own configuration
// file; what a file cannot hold (callbacks, Runner, classifiers) is set on
// the result in code. docs/config.md has the details.
package config
