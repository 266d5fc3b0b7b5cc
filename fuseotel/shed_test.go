package fuseotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/fusebox-go/fusebox/fuseotel"
	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
)

// shedSetup returns a shedder of cfg registered as "api" with a reader.
func shedSetup(t *testing.T, cfg shed.Config) (*shed.Shedder, *sdkmetric.ManualReader) {
	t.Helper()
	s, err := shed.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { require.NoError(t, mp.Shutdown(context.Background())) })
	_, err = fuseotel.RegisterShedder("api", s, mp, fuseotel.Opts{})
	require.NoError(t, err)
	return s, reader
}

var (
	api       = attribute.String("shedder", "api")
	sheddable = attribute.String("priority", "sheddable")
)

// A real shedder's admissions show at once; what it refuses, by priority
// and reason, and shadow mode's would-be refusals are mapped by
// TestRegisterShedderObservesEveryFigureOfStats (an overload needs the
// real scheduler, so the shed package's own tests make one).
func TestRegisterShedderReadsARealShedder(t *testing.T) {
	s, reader := shedSetup(t, shed.Config{})
	p := collect(t, reader)
	assert.Zero(t, p.get(t, "fusebox.shed.refused", api, sheddable), "every point from the start")
	assert.Zero(t, p.get(t, "fusebox.shed.shadow", api))
	tk, err := s.Allow(priority.Default, "")
	require.NoError(t, err)
	p = collect(t, reader)
	assert.Equal(t, 1.0, p.get(t, "fusebox.shed.in_flight", api))
	assert.Equal(t, 1.0, p.get(t, "fusebox.shed.admitted", api))
	tk.Done()
	assert.Zero(t, collect(t, reader).get(t, "fusebox.shed.in_flight", api))
}

func TestRegisterShedderSaysShadowMode(t *testing.T) {
	_, reader := shedSetup(t, shed.Config{Shadow: true})
	assert.Equal(t, 1.0, collect(t, reader).get(t, "fusebox.shed.shadow", api))
}

func TestRegisterShedderRefusesBadArguments(t *testing.T) {
	s, err := shed.New(shed.Config{})
	require.NoError(t, err)
	defer s.Close()
	mp := sdkmetric.NewMeterProvider()
	defer mp.Shutdown(context.Background())
	for _, c := range []struct {
		name string
		s    *shed.Shedder
		mp   metric.MeterProvider
		n    string
		want string
	}{
		{"a nil shedder", nil, mp, "api", "nil *shed.Shedder"},
		{"a nil meter provider", s, nil, "api", "nil metric.MeterProvider"},
		{"an empty name", s, mp, "", "empty name"},
	} {
		t.Run(c.name+" is refused", func(t *testing.T) {
			_, err := fuseotel.RegisterShedder(c.n, c.s, c.mp, fuseotel.Opts{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
