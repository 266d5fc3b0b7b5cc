// Package fuseotel reports the state of every supplier of an
// executor.Group through OpenTelemetry metrics: the same instruments as the
// Prometheus collector of the metrics package, observed by one callback
// that reads Executor.Stats at each collection.
//
//	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
//	reg, err := fuseotel.Register(g, mp, fuseotel.Opts{})
//	...
//	defer reg.Unregister()
//
// The call-duration histogram, which the metrics API cannot observe, comes
// through a Producer given to the reader:
//
//	reader := sdkmetric.NewPeriodicReader(exporter,
//		sdkmetric.WithProducer(fuseotel.NewDurationProducer(g, fuseotel.Opts{})))
//
// RegisterShedder reports an inbound shedder (package shed) the same way:
// admitted and refused requests by priority and reason, shadow mode's
// would-be refusals, the capacity estimate and the in-flight level.
//
// Nothing runs between collections and nothing is stored: the bridge is as
// cheap as the exporter's collection interval makes it. Suppliers appear
// with their executor (at NewGroup for every supplier the configuration
// names) and disappear when the Group evicts them.
package fuseotel
