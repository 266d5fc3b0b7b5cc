package fuseotel_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/fusebox-go/fusebox/fuseotel"
	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
)

// overload drives s into a real overload until it sheds (or would, in
// shadow mode) a sheddable request, within 10 s: goroutines spin on
// every CPU, so that the scheduler's run queue, which the shedder reads,
// holds a backlog, while sheddable requests arrive and never complete.
// It returns the tickets to finish. The signal is the real scheduler's,
// so this runs in real time, not in a bubble.
func overload(t *testing.T, s *shed.Shedder) []shed.Ticket {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < 10000; i++ {
					_ = i * i
				}
			}
		})
	}
	defer wg.Wait()
	defer close(stop)
	var held []shed.Ticket
	shadow := s.Stats().Shadow
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		tk, err := s.Allow(priority.Sheddable, "")
		if err != nil {
			require.True(t, errors.Is(err, shed.ErrShed), "%v", err)
			return held
		}
		held = append(held, tk)
		if shadow && s.Stats().Shed[priority.Sheddable] > 0 {
			return held
		}
	}
	t.Fatalf("no request shed in 10 s of overload: %+v", s.Stats())
	return nil
}

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
	// A target of 1 µs and 10 ms intervals: any backlog of the run queue
	// is an overload, at once.
	eager = shed.Config{Target: time.Microsecond, Interval: 10 * time.Millisecond}
)

func TestRegisterShedderSeesRequestsShed(t *testing.T) {
	s, reader := shedSetup(t, eager)
	p := collect(t, reader)
	assert.Zero(t, p.get(t, "fusebox.shed.refused", api, sheddable), "every point from the start")
	tk, err := s.Allow(priority.Default, "")
	require.NoError(t, err)
	assert.Equal(t, 1.0, collect(t, reader).get(t, "fusebox.shed.in_flight", api))
	tk.Done()

	held := overload(t, s)
	defer func() {
		for _, tk := range held {
			tk.Done()
		}
	}()
	p = collect(t, reader)
	refused := p.get(t, "fusebox.shed.refused", api, sheddable)
	assert.GreaterOrEqual(t, refused, 1.0)
	assert.Equal(t, float64(s.Stats().Shed[priority.Sheddable]), refused)
	byReason := 0.0
	for _, r := range []string{"queue", "limit", "tenant"} {
		byReason += p.get(t, "fusebox.shed.refused_by_reason", api, attribute.String("reason", r))
	}
	assert.Equal(t, refused, byReason, "each refusal has one reason")
	assert.Equal(t, float64(len(held)+1), p.get(t, "fusebox.shed.admitted", api))
	assert.Equal(t, float64(len(held)), p.get(t, "fusebox.shed.in_flight", api))
	assert.Zero(t, p.get(t, "fusebox.shed.shadowed", api, sheddable))
}

func TestRegisterShedderSeesShadowModesWouldBeRefusals(t *testing.T) {
	cfg := eager
	cfg.Shadow = true
	s, reader := shedSetup(t, cfg)
	held := overload(t, s)
	defer func() {
		for _, tk := range held {
			tk.Done()
		}
	}()
	p := collect(t, reader)
	assert.Equal(t, 1.0, p.get(t, "fusebox.shed.shadow", api))
	assert.GreaterOrEqual(t, p.get(t, "fusebox.shed.shadowed", api, sheddable), 1.0)
	assert.Zero(t, p.get(t, "fusebox.shed.refused", api, sheddable), "shadow mode refuses nothing")
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
