package loadtest

import (
	"context"
	"time"
)

// clock maps scenario time to wall time: at speed s, a scenario second lasts
// 1/s of a wall second. Scenario times are durations since the start of the
// run. At speed 1 no floating point is involved, so under testing/synctest
// every time is exact to the nanosecond.
type clock struct {
	start time.Time
	speed float64
}

func newClock(speed float64) clock { return clock{start: time.Now(), speed: speed} }

// wall converts a scenario duration to wall time.
func (c clock) wall(d time.Duration) time.Duration {
	if c.speed == 1 {
		return d
	}
	return time.Duration(float64(d) / c.speed)
}

// scenario converts a wall duration to scenario time.
func (c clock) scenario(d time.Duration) time.Duration {
	if c.speed == 1 {
		return d
	}
	return time.Duration(float64(d) * c.speed)
}

// now is the scenario time since the start.
func (c clock) now() time.Duration { return c.scenario(time.Since(c.start)) }

// at converts an instant to scenario time since the start.
func (c clock) at(t time.Time) time.Duration { return c.scenario(t.Sub(c.start)) }

// sleep waits for the scenario duration d, or until ctx ends; it reports
// whether the whole duration passed.
func (c clock) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(c.wall(d))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// sleepUntil waits until scenario time at, or until ctx ends.
func (c clock) sleepUntil(ctx context.Context, at time.Duration) bool {
	return c.sleep(ctx, at-c.now())
}

// secs converts a duration to float seconds, for reports.
func secs(d time.Duration) float64 { return d.Seconds() }

// secsPtr is secs for an optional moment: nil when ok is false.
func secsPtr(d time.Duration, ok bool) *float64 {
	if !ok {
		return nil
	}
	s := d.Seconds()
	return &s
}
