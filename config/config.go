package config

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/fusebox-go/fusebox/executor"
)

// Group is an executor.GroupConfig as a file writes it. Every field is
// optional: a field left out (or null) is not set.
type Group struct {
	// Default configures every supplier that Suppliers does not list.
	// The fields it leaves out have the defaults of executor.Config.
	Default Executor `json:"default" yaml:"default"`
	// Suppliers configure the suppliers they name. An entry writes
	// only what differs from Default: each field it sets replaces
	// Default's, an explicit zero included ("queue": 0 means no queue even
	// when Default has one), and each field it leaves out is Default's.
	Suppliers map[string]Executor `json:"suppliers,omitempty" yaml:"suppliers,omitempty"`
	// IdleTimeout is executor.GroupConfig.IdleTimeout: evict an executor
	// that saw no call for this long. Left out: never.
	IdleTimeout *Duration `json:"idleTimeout,omitempty" yaml:"idleTimeout,omitempty"`
	// Strict is executor.GroupConfig.Strict: refuse names that
	// Suppliers does not list. Left out: false.
	Strict *bool `json:"strict,omitempty" yaml:"strict,omitempty"`
	// MaxSuppliers is executor.GroupConfig.MaxSuppliers: the executors
	// made on first use, at most. Left out: 1,024.
	MaxSuppliers *int `json:"maxSuppliers,omitempty" yaml:"maxSuppliers,omitempty"`
}

// Executor is an executor.Config as a file writes it. Each field is the
// executor.Config field of the same name; what a field left out means
// depends on where the Executor is (see Group).
type Executor struct {
	// Slots is executor.Config.Slots: calls that may run at once.
	Slots *int `json:"slots,omitempty" yaml:"slots,omitempty"`
	// Queue is executor.Config.Queue: calls that may wait for a slot.
	Queue *int `json:"queue,omitempty" yaml:"queue,omitempty"`
	// QueueTimeout is executor.Config.QueueTimeout.
	QueueTimeout *Duration `json:"queueTimeout,omitempty" yaml:"queueTimeout,omitempty"`
	// LowWater is executor.Config.LowWater.
	LowWater *int `json:"lowWater,omitempty" yaml:"lowWater,omitempty"`
	// InvocationTimeout is executor.Config.InvocationTimeout.
	InvocationTimeout *Duration `json:"invocationTimeout,omitempty" yaml:"invocationTimeout,omitempty"`
	// Breaker is executor.Config.Breaker, field by field.
	Breaker Breaker `json:"breaker" yaml:"breaker,omitempty"`
	// Stuck is executor.Config.Stuck, field by field.
	Stuck Stuck `json:"stuck,omitzero" yaml:"stuck,omitempty"`
	// Shadow is executor.Config.Shadow: evaluate every rule, refuse
	// nothing (see docs/shadow.md).
	Shadow *bool `json:"shadow,omitempty" yaml:"shadow,omitempty"`
	// CriticalShare is executor.Config.CriticalShare: the share of the
	// slots kept for critical calls (see package priority).
	CriticalShare *float64 `json:"criticalShare,omitempty" yaml:"criticalShare,omitempty"`
	// Adaptive is executor.Config.Adaptive, field by field.
	Adaptive Adaptive `json:"adaptive,omitzero" yaml:"adaptive,omitempty"`
	// Throttle is executor.Config.Throttle, field by field: present (even
	// empty, {}), it turns client-side throttling on.
	Throttle *Throttle `json:"throttle,omitempty" yaml:"throttle,omitempty"`
}

// Throttle is a throttle.Config as a file writes it. Each field is the
// throttle.Config field of the same name; K, per priority, is set from
// code only (a file gets its defaults).
type Throttle struct {
	// Window is throttle.Config.Window: how far back the counts go.
	Window *Duration `json:"window,omitempty" yaml:"window,omitempty"`
	// MinRequests is throttle.Config.MinRequests.
	MinRequests *int `json:"minRequests,omitempty" yaml:"minRequests,omitempty"`
}

// Adaptive is an executor.AdaptiveConfig as a file writes it: the bounds of
// an adaptive slot limit. Each field is the executor.AdaptiveConfig field
// of the same name; OnChange cannot come from a file.
type Adaptive struct {
	// Max is executor.AdaptiveConfig.Max: the largest limit; 0 is off.
	Max *int `json:"max,omitempty" yaml:"max,omitempty"`
	// Min is executor.AdaptiveConfig.Min: the smallest limit.
	Min *int `json:"min,omitempty" yaml:"min,omitempty"`
	// Initial is executor.AdaptiveConfig.Initial: the limit at the start.
	Initial *int `json:"initial,omitempty" yaml:"initial,omitempty"`
}

// Stuck is an executor.StuckConfig as a file writes it: when a full
// bulkhead trips the breaker. Each field is the executor.StuckConfig field
// of the same name.
type Stuck struct {
	// Multiple is executor.StuckConfig.Multiple: of the supplier's p99.
	Multiple *float64 `json:"multiple,omitempty" yaml:"multiple,omitempty"`
	// MinAge is executor.StuckConfig.MinAge: the threshold's floor.
	MinAge *Duration `json:"minAge,omitempty" yaml:"minAge,omitempty"`
	// MaxAge is executor.StuckConfig.MaxAge: its ceiling.
	MaxAge *Duration `json:"maxAge,omitempty" yaml:"maxAge,omitempty"`
	// TripOnAnySaturation is executor.StuckConfig.TripOnAnySaturation.
	TripOnAnySaturation *bool `json:"tripOnAnySaturation,omitempty" yaml:"tripOnAnySaturation,omitempty"`
}

// Breaker is the data of a breaker.Config as a file writes it. Each field
// is the breaker.Config field of the same name. Name, ErrorKinds, Classify
// and OnTransition cannot come from a file: a breaker is named after its
// supplier, and the others hold functions; set them in code on the
// result.
type Breaker struct {
	// ConsecutiveFailures is breaker.Config.ConsecutiveFailures.
	ConsecutiveFailures *int `json:"consecutiveFailures,omitempty" yaml:"consecutiveFailures,omitempty"`
	// FailureRate is breaker.Config.FailureRate.
	FailureRate *float64 `json:"failureRate,omitempty" yaml:"failureRate,omitempty"`
	// SlowCallRate is breaker.Config.SlowCallRate.
	SlowCallRate *float64 `json:"slowCallRate,omitempty" yaml:"slowCallRate,omitempty"`
	// SlowCallDuration is breaker.Config.SlowCallDuration.
	SlowCallDuration *Duration `json:"slowCallDuration,omitempty" yaml:"slowCallDuration,omitempty"`
	// MinimumCalls is breaker.Config.MinimumCalls.
	MinimumCalls *int `json:"minimumCalls,omitempty" yaml:"minimumCalls,omitempty"`
	// WindowSize is breaker.Config.WindowSize.
	WindowSize *int `json:"windowSize,omitempty" yaml:"windowSize,omitempty"`
	// WindowDuration is breaker.Config.WindowDuration.
	WindowDuration *Duration `json:"windowDuration,omitempty" yaml:"windowDuration,omitempty"`
	// WindowBuckets is breaker.Config.WindowBuckets.
	WindowBuckets *int `json:"windowBuckets,omitempty" yaml:"windowBuckets,omitempty"`
	// ResetTimeout is breaker.Config.ResetTimeout.
	ResetTimeout *Duration `json:"resetTimeout,omitempty" yaml:"resetTimeout,omitempty"`
	// MaxResetTimeout is breaker.Config.MaxResetTimeout.
	MaxResetTimeout *Duration `json:"maxResetTimeout,omitempty" yaml:"maxResetTimeout,omitempty"`
	// ResetJitter is breaker.Config.ResetJitter.
	ResetJitter *float64 `json:"resetJitter,omitempty" yaml:"resetJitter,omitempty"`
	// HalfOpenProbes is breaker.Config.HalfOpenProbes.
	HalfOpenProbes *int `json:"halfOpenProbes,omitempty" yaml:"halfOpenProbes,omitempty"`
}

// Duration is a time.Duration written the way Go writes one: "250ms",
// "30s", "1m30s". It reads and writes itself as text, so every format
// whose decoder honours encoding.TextUnmarshaler can hold it.
type Duration time.Duration

// MarshalText writes d as time.Duration.String does ("1m30s").
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).String()), nil
}

// UnmarshalText reads a duration as time.ParseDuration does.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return fmt.Errorf("want a duration such as \"250ms\", \"30s\" or \"1m30s\", got %q", text)
	}
	*d = Duration(v)
	return nil
}

// GroupConfig returns the executor.GroupConfig that g describes, each
// supplier's configuration complete (Default and its entry), validated
// with the errors of executor.NewGroup. The fields that hold functions
// (OnTransition, Runner, and those of each Breaker) are nil: set them on
// the result before executor.NewGroup.
func (g Group) GroupConfig() (executor.GroupConfig, error) {
	cfg := executor.GroupConfig{Default: g.Default.Config()}
	if g.Suppliers != nil {
		cfg.Suppliers = make(map[string]executor.Config, len(g.Suppliers))
		for name, d := range g.Suppliers {
			c := cfg.Default
			d.applyTo(&c)
			cfg.Suppliers[name] = c
		}
	}
	if g.IdleTimeout != nil {
		cfg.IdleTimeout = time.Duration(*g.IdleTimeout)
	}
	if g.Strict != nil {
		cfg.Strict = *g.Strict
	}
	if g.MaxSuppliers != nil {
		cfg.MaxSuppliers = *g.MaxSuppliers
	}
	if err := check(cfg); err != nil {
		return executor.GroupConfig{}, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// check validates cfg the one way there is, by making the group; an idle
// group starts nothing, and closing it is immediate.
func check(cfg executor.GroupConfig) error {
	g, err := executor.NewGroup(cfg)
	if err != nil {
		return err
	}
	return g.Close(context.Background())
}

// Config returns the executor.Config with the fields e sets; the others
// are zero, which executor.New reads as their documented defaults.
func (e Executor) Config() executor.Config {
	var c executor.Config
	e.applyTo(&c)
	return c
}

// applyTo sets each field of c that e sets. The fields are matched by
// name, so the list of fields is written once, in the types above; a test
// checks that every field of executor.Config and breaker.Config that a
// file can hold has its counterpart here.
func (e Executor) applyTo(c *executor.Config) {
	apply(reflect.ValueOf(c).Elem(), reflect.ValueOf(e))
}

// apply copies every set field of src, a struct of pointers and nested
// such structs, to the field of the same name of dst, converting the
// value (a Duration to a time.Duration).
func apply(dst, src reflect.Value) {
	for i := range src.NumField() {
		from, to := src.Field(i), dst.FieldByName(src.Type().Field(i).Name)
		switch {
		case from.Kind() == reflect.Struct:
			apply(to, from)
		case from.Kind() == reflect.Pointer && from.Type().Elem().Kind() == reflect.Struct:
			// A section that turns a feature on (Throttle): present, even
			// empty, it makes the target's struct, then sets its fields.
			// A copy: the target may share its struct with the default.
			if from.IsNil() {
				continue
			}
			fresh := reflect.New(to.Type().Elem())
			if !to.IsNil() {
				fresh.Elem().Set(to.Elem())
			}
			apply(fresh.Elem(), from.Elem())
			to.Set(fresh)
		case !from.IsNil():
			to.Set(from.Elem().Convert(to.Type()))
		}
	}
}
