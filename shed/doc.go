// Package shed protects a whole service (a process or one listener) from
// more requests than it can serve: an inbound load shedder with no CPU
// threshold to tune. It measures how long goroutines wait for a CPU and,
// while that wait stays above Config.Target with the process's CPUs full,
// admits about the capacity it has measured and caps the requests in
// flight (docs/shedding.md has the mechanism). Sheddable requests are
// refused first, then default ones, then critical ones; a tenant above
// its fair share before the others of its priority.
//
//	s, err := shed.New(shed.Config{})
//	defer s.Close()
//	srv := &http.Server{Handler: s.Handler(mux, nil)}
//
// A refused request is answered 503 with Retry-After. Importing the
// package starts nothing; Close stops the Shedder's sampling goroutine.
package shed
