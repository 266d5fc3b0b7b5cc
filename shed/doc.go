// Package shed protects a whole service (a process or one listener) from
// more requests than it can serve: an inbound load shedder with no CPU
// threshold to tune. Every Interval it reads how long goroutines waited
// for a CPU (runtime/metrics, /sched/latencies:seconds), which is where a
// CPU-bound service queues its work, whether its handlers yield or not.
// When that wait per request stays above Config.Target while the
// process's CPUs are full (on Linux, its threads' times), an overload begins:
// the shedder admits about the capacity it has measured (the most
// requests completed in an interval, as BBR's maxPass), less what drains
// the queue, and caps the requests in flight at what completes in Target
// (more for critical requests and tenants within their fair share).
// A service whose handlers wait on a slow supplier, with the CPU idle,
// builds no such wait and is not shed: that is the per-route bulkheads'
// job (package fusehttp/inbound).
//
// Sheddable requests are refused first, then default ones, then critical
// ones (package priority); with a tenant key, a tenant above its fair
// share is refused before the others of its priority.
//
//	s, err := shed.New(shed.Config{})
//	if err != nil { ... }
//	defer s.Close()
//	srv := &http.Server{Handler: s.Handler(mux, nil)}
//
// A refused HTTP request is answered 503 with Retry-After; fusegrpc's
// shedding interceptors answer RESOURCE_EXHAUSTED with a pushback.
// Importing the package starts nothing: the sampling goroutine belongs to
// the Shedder New returns, and Close stops it.
package shed
