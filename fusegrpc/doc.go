// Package fusegrpc protects outgoing gRPC calls with one bulkhead and one
// circuit breaker per supplier: Interceptor's unary and streaming client
// interceptors run every call on the executor an executor.Group keeps for
// the call's key (by default the connection's target).
//
//	g, err := executor.NewGroup(executor.GroupConfig{
//		Default: executor.Config{
//			Slots:             20,
//			InvocationTimeout: 5 * time.Second,
//			Breaker:           breaker.Config{ResetTimeout: 10 * time.Second},
//		},
//	})
//	...
//	ic := &fusegrpc.Interceptor{Group: g}
//	conn, err := grpc.NewClient("payments.internal:443", append(ic.DialOptions(), creds)...)
//	...
//	_, err = payments.Charge(ctx, req)
//	if status.Code(err) == codes.Unavailable && errors.Is(err, breaker.ErrOpen) {
//		// refused at once, nothing sent: degrade
//	}
//
// # Refusals
//
// A call the executor refuses is never sent. It fails with an *Error of
// code Unavailable whose message says which supplier refused and why
// (breaker open, bulkhead saturated, group closed), so a client that
// already treats Unavailable as "try elsewhere or later" does the right
// thing. The error wraps the executor's *executor.RejectedError, so
// errors.Is(err, breaker.ErrOpen) tells a refusal from a server's own
// Unavailable. A call that outlives the executor's InvocationTimeout fails
// with DeadlineExceeded (errors.Is executor.ErrTimeout).
//
// # Classification
//
// The breaker sees one error per call, the one Interceptor.Classify
// returns; DefaultClassify counts Unavailable, DeadlineExceeded,
// ResourceExhausted, Internal, Unknown and DataLoss as failures, ignores
// Canceled, and counts every other code as a success: the supplier
// answered, the caller asked for something it could not have. The caller
// always gets the call's own status.
//
// # Streams
//
// A stream holds its slot from the moment it is opened until it ends:
// RecvMsg returns io.EOF or an error (or the one response of a stream
// without server streaming), SendMsg or Header fails, or the caller's
// context is cancelled. The slot is free again before that last RecvMsg
// returns. The executor's InvocationTimeout bounds the whole stream, as it
// bounds an HTTP exchange body included in fusehttp: give suppliers that
// keep streams open for long an InvocationTimeout to match, or a Group
// supplier of their own.
//
// # Keys
//
// Target (the default) gives every connection target its own executor;
// Service and Method split a target by service or by method, so that one
// hanging method trips only its own breaker. Per-key settings come from the
// Group's Suppliers under the key's name.
//
// # Inbound
//
// Server does the same for a service's own methods: its unary and stream
// interceptors admit each call through the executor of its full method,
// hold the slot until the handler returns, and refuse a call that finds
// no slot with ResourceExhausted (busy) or Unavailable (breaker open),
// with a grpc-retry-pushback-ms trailer that a grpc-go client with a retry
// policy honours.
package fusegrpc
