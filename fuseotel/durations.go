package fuseotel

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// DurationPointsPerSupplier is the number of histogram data points the
// duration producer reports per supplier: one per outcome, each with the
// 11 buckets of executor.DurationBuckets and the +Inf bucket.
const DurationPointsPerSupplier = 3

// NewDurationProducer returns a Producer that reports the call-duration
// histograms of every executor of g (executor.Stats.Durations) as one
// OpenTelemetry histogram, fusebox.call.duration in seconds, with the
// attributes supplier and outcome (success, failure, ignored):
//
//	reader := sdkmetric.NewPeriodicReader(exporter,
//		sdkmetric.WithProducer(fuseotel.NewDurationProducer(g, fuseotel.Opts{})))
//
// The metrics API has no observable histogram, and the executor keeps its
// histograms itself (cumulative, with the fixed buckets of
// executor.DurationBuckets), so they reach a reader through this producer
// rather than through Register's callback. Through OpenTelemetry's
// Prometheus exporter the histogram is fusebox_call_duration_seconds, as
// the metrics package names it. Its temporality is cumulative: a supplier's
// points start when the producer first saw its executor (the producer's
// creation for those already there), and an executor the group evicted and
// made again, whose histograms start from 0, gets a new start time, which
// tells a consumer that the series was reset. A call counts from the moment
// it got its slot until its function returned, or its deadline if it timed
// out; calls that never ran are not in it. The producer starts nothing; it
// remembers each present supplier's executor and start time. Opts apply as
// for Register.
func NewDurationProducer(g *executor.Group, opts Opts) sdkmetric.Producer {
	p := opts.Prefix
	if p == "" {
		p = "fusebox"
	}
	now := time.Now()
	return &durationProducer{g: g, name: p + ".call.duration", base: opts.Attributes, last: now,
		seen: map[string]seenExecutor{}}
}

type durationProducer struct {
	g    *executor.Group
	name string
	base []attribute.KeyValue

	mu   sync.Mutex              // Produce may be called concurrently
	last time.Time               // the last collection, or the producer's creation
	seen map[string]seenExecutor // by supplier, those of the last collection
}

// seenExecutor is a supplier's executor as the producer saw it, and the
// start time of its points.
type seenExecutor struct {
	ex    *executor.Executor
	start time.Time
}

// startOf returns the start time of the points of name's executor ex, and
// notes it in next. An executor not seen at the last collection (new, or
// evicted and made again) was made after it: its points start then, before
// anything they count.
func (p *durationProducer) startOf(name string, ex *executor.Executor, next map[string]seenExecutor) time.Time {
	s, ok := p.seen[name]
	if !ok || s.ex != ex {
		s = seenExecutor{ex, p.last}
	}
	next[name] = s
	return s.start
}

// bounds are the histogram's bucket bounds in seconds.
var bounds = func() []float64 {
	b := make([]float64, len(executor.DurationBuckets))
	for i, d := range executor.DurationBuckets {
		b[i] = d.Seconds()
	}
	return b
}()

var outcomes = [...]breaker.Outcome{breaker.Success, breaker.Failure, breaker.Ignored}

// Produce returns the histograms of every executor of the group at this
// moment.
func (p *durationProducer) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	if p.g == nil {
		return nil, errors.New("fuseotel: a duration producer with a nil *executor.Group")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	next := make(map[string]seenExecutor, len(p.seen))
	var dps []metricdata.HistogramDataPoint[float64]
	for _, name := range p.g.Names() {
		ex, ok := p.g.Lookup(name)
		if !ok {
			continue // evicted meanwhile
		}
		start := p.startOf(name, ex, next)
		st := ex.Stats()
		for _, o := range outcomes {
			h := &st.Durations[o]
			// OpenTelemetry counts per bucket, the executor cumulatively.
			counts := make([]uint64, len(bounds)+1)
			prev := uint64(0)
			for i, c := range h.Buckets {
				counts[i] = c - prev
				prev = c
			}
			counts[len(bounds)] = h.Count - prev
			kv := make([]attribute.KeyValue, 0, len(p.base)+2)
			kv = append(append(kv, p.base...), attribute.String("supplier", st.Supplier), attribute.String("outcome", o.String()))
			dps = append(dps, metricdata.HistogramDataPoint[float64]{
				Attributes: attribute.NewSet(kv...), StartTime: start, Time: now,
				Count: h.Count, Bounds: bounds, BucketCounts: counts, Sum: h.Sum.Seconds(),
			})
		}
	}
	p.seen, p.last = next, now
	return []metricdata.ScopeMetrics{{
		Scope: instrumentation.Scope{Name: ScopeName},
		Metrics: []metricdata.Metrics{{
			Name:        p.name,
			Description: "Durations of the calls that ran, from getting a slot to the function's return (or the deadline of a call that timed out), by outcome: success, failure or ignored.",
			Unit:        "s",
			Data:        metricdata.Histogram[float64]{DataPoints: dps, Temporality: metricdata.CumulativeTemporality},
		}},
	}}, nil
}
