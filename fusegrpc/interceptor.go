package fusegrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/priority"
)

// Interceptor runs gRPC client calls through the executors of a Group: one
// bulkhead and breaker per key (by default the connection's target). Install
// it on a connection with DialOptions, or take Unary and Stream apart:
//
//	ic := &fusegrpc.Interceptor{Group: g}
//	conn, err := grpc.NewClient("payments.internal:443", ic.DialOptions()...)
//
// The fields are read on every call; set them before first use. An
// Interceptor is safe for concurrent use. A nil *Interceptor, one without
// a Group, or a call with a nil context fails each call with an *Error of
// code Internal saying which, without sending it.
type Interceptor struct {
	// Group supplies one executor per key; its GroupConfig sets the slots,
	// timeouts and breaker rules of every supplier. Required.
	Group *executor.Group

	// Key names the executor of a call. nil means Target: one bulkhead and
	// breaker per connection target. Service keys by target and service,
	// Method by target and full method name; a func of your own can key by
	// anything. It must not return "". A Key that panics fails the call
	// with codes.Internal (wrapping a *breaker.PanicError), without
	// sending it.
	Key func(ctx context.Context, method string, cc *grpc.ClientConn) string

	// Names maps keys to supplier names, so that configuration keys and
	// metric labels read as the supplier ("payments") rather than its
	// target: a call whose key is in Names runs on the executor of the name
	// it maps to. Other calls keep their key; with a Strict group they are
	// refused. A key mapped to "" fails the call with codes.Internal, an
	// error naming Names, without sending it. nil means no mapping.
	Names map[string]string

	// Classify turns a call's final error into the error its breaker
	// records: nil counts as a success, context.Canceled as ignored (with
	// the breaker's default classifier), anything else as a failure. It
	// never changes what the caller receives. nil means DefaultClassify. A
	// Classify that panics is logged, and the call counts as a failure; one
	// that ends its goroutine (runtime.Goexit) gives the slot back all the
	// same, counted as a failure with a *breaker.PanicError naming it, and
	// the Goexit goes on. It runs with the call's slot held, on the call's
	// goroutine for a unary call and on the caller's own for a stream (in
	// RecvMsg, SendMsg or Header): keep it pure and quick, since a
	// Classify that blocks holds the slot, and blocks a stream's caller,
	// past the invocation timeout.
	Classify func(err error) error

	// PriorityKey names the metadata key that carries the priority of a
	// call's context (priority.From) to the server, so that a service that
	// trusts this one sheds work in the same order, in place of any value
	// the call's own metadata gives the key. A Default priority sends
	// nothing. "" means priority.Header, lower-cased; "-" sends none.
	PriorityKey string
}

// withPriority returns ctx with its priority, unless Default, in the
// outgoing metadata under key (see Interceptor.PriorityKey), in place of
// any value the call's own metadata gives that key: ctx itself when that
// metadata gives the key this one value already.
func withPriority(ctx context.Context, key string) context.Context {
	p := priority.From(ctx)
	if p == priority.Default || key == "-" {
		return ctx
	}
	md, ok := metadata.FromOutgoingContext(ctx) // a copy of its own
	if !ok && key == "" {
		// No metadata of the call's own: a shared MD. gRPC only reads a
		// context's metadata, and hands out copies of it.
		return metadata.NewOutgoingContext(ctx, priorityMD[p])
	}
	k := priorityKey
	if key != "" {
		k = strings.ToLower(key)
	}
	v := priorityMD[p][priorityKey] // shared, read only as above
	if cur := md[k]; len(cur) == 1 && cur[0] == v[0] {
		// The call's metadata says so already (a proxy passing on what
		// it received): sent as it is, with no context of ours.
		return ctx
	}
	if !ok {
		md = make(metadata.MD, 1)
	}
	md[k] = v
	return metadata.NewOutgoingContext(ctx, md)
}

// priorityKey is priority.Header as a metadata key.
var priorityKey = strings.ToLower(priority.Header)

// priorityMD holds the outgoing metadata of each priority under
// priorityKey, made once.
var priorityMD = func() (m [priority.Levels]metadata.MD) {
	for p := range m {
		m[p] = metadata.MD{priorityKey: {priority.Priority(p).String()}}
	}
	return m
}()

// Target is the default key: the target string the connection was made
// with, as grpc.ClientConn.Target returns it ("payments.internal:443",
// "dns:///payments.internal:443"). A nil connection has no target: Target,
// Service and Method return "" for it, which Interceptor refuses as no
// key.
func Target(_ context.Context, _ string, cc *grpc.ClientConn) string {
	if cc == nil {
		return ""
	}
	return cc.Target()
}

// Service keys a call by the connection's target and the call's service,
// "target/package.Service": one bulkhead and breaker per service behind a
// target.
func Service(_ context.Context, method string, cc *grpc.ClientConn) string {
	if cc == nil {
		return ""
	}
	svc := strings.TrimPrefix(method, "/")
	if i := strings.LastIndexByte(svc, '/'); i >= 0 {
		svc = svc[:i]
	}
	return cc.Target() + "/" + svc
}

// Method keys a call by the connection's target and the full method name,
// "target/package.Service/Method": one bulkhead and breaker per method, so
// one hanging method cannot take its siblings down with it.
func Method(_ context.Context, method string, cc *grpc.ClientConn) string {
	if cc == nil {
		return ""
	}
	return cc.Target() + method
}

// DefaultClassify counts as failures the codes that say the supplier is in
// trouble: Unavailable, DeadlineExceeded, ResourceExhausted, Internal,
// Unknown and DataLoss, and errors that carry no status at all. It returns
// context.Canceled for Canceled, so that a call the caller gave up on is
// ignored, and nil (a success: the supplier answered) for every other code:
// InvalidArgument, NotFound, AlreadyExists, PermissionDenied,
// Unauthenticated, FailedPrecondition, Aborted, OutOfRange, Unimplemented.
//
// grpc reports some errors of the client's own side with codes.Internal
// too (a request message that fails to marshal, SendMsg after CloseSend):
// they count as failures here, since the code alone cannot tell them from
// a server's. A Classify of one's own can tell them apart (by the message
// or the error's cause) and return nil or context.Canceled for them.
func DefaultClassify(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err // not a status: a transport or library error
	}
	switch st.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted,
		codes.Internal, codes.Unknown, codes.DataLoss:
		return err
	case codes.Canceled:
		return context.Canceled
	}
	return nil
}

// DialOptions returns the options that install both interceptors, chained
// after any installed before them.
func (i *Interceptor) DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(i.Unary()),
		grpc.WithChainStreamInterceptor(i.Stream()),
	}
}

// unaryResult carries the call's own error to the caller, while the
// protected function returns the classified error to the breaker.
type unaryResult struct{ err error }

// Unary returns the unary client interceptor. A call the executor refuses
// fails at once with an *Error of code Unavailable, without being sent; a
// call that outlives the executor's InvocationTimeout fails with
// DeadlineExceeded. Otherwise the caller gets the call's own result.
func (i *Interceptor) Unary() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		key, err := i.key(ctx, method, cc)
		if err != nil {
			return err
		}
		r, err := executor.DoIn(ctx, i.Group, key, func(ctx context.Context) (*unaryResult, error) {
			err := invoker(withPriority(ctx, i.PriorityKey), method, req, reply, cc, opts...)
			return &unaryResult{err}, i.classify(err)
		})
		if r != nil {
			return r.err // the call ran and returned: its own error, whatever the verdict
		}
		return statusOf(ctx, err)
	}
}

// key returns the executor key of a call, or an *Error the caller can act
// on. A nil *Interceptor or a nil context fails the call with an error
// saying so, as a zero Interceptor does, rather than with a panic on the
// caller's goroutine; key is the first thing a call does, before anything
// relies on either.
func (i *Interceptor) key(ctx context.Context, method string, cc *grpc.ClientConn) (key string, err error) {
	switch {
	case i == nil:
		return "", &Error{Code: codes.Internal, Err: errors.New("fusegrpc: the Interceptor is a nil *Interceptor")}
	case ctx == nil:
		return "", &Error{Code: codes.Internal, Err: fmt.Errorf("fusegrpc: %s called with a nil context (use context.Background())", method)}
	case i.Group == nil:
		return "", &Error{Code: codes.Internal, Err: errors.New("fusegrpc: Interceptor.Group is nil")}
	}
	keyOf := i.Key
	if keyOf == nil {
		keyOf = Target
	}
	if key, err = breaker.Guard("fusegrpc.Interceptor.Key", func() (string, error) { return keyOf(ctx, method, cc), nil }, nil); err != nil {
		return "", &Error{Code: codes.Internal, Err: err}
	}
	if name, ok := i.Names[key]; ok {
		if name == "" {
			return "", &Error{Code: codes.Internal, Err: fmt.Errorf("fusegrpc: Interceptor.Names maps %q (the key of %s) to an empty name", key, method)}
		}
		key = name
	}
	if key == "" && cc == nil {
		return "", &Error{Code: codes.Internal, Err: fmt.Errorf("fusegrpc: no key for %s, which has a nil *grpc.ClientConn (Interceptor.Key returned \"\")", method)}
	}
	if key == "" {
		return "", &Error{Code: codes.Internal, Err: fmt.Errorf("fusegrpc: Interceptor.Key returned no key for %s", method)}
	}
	return key, nil
}

// done ends the lease l of a stream that ended with err, with Classify's
// verdict (executor.Lease.Finish: a Classify that panics or ends the
// goroutine counts as a failure).
func (i *Interceptor) done(l *executor.Lease, err error) {
	logPanic(l.Finish(err, i.classifier(), classifyCallback), err)
}

// classify applies Classify under executor.Guard. A classifier that
// panics makes the call a failure, recorded as a *breaker.PanicError
// naming it (as the breaker does with its own Classify), and is logged
// with its stack.
func (i *Interceptor) classify(err error) error {
	c := i.classifier()
	v, perr := breaker.Guard(classifyCallback, func() (error, error) { return c(err), nil }, nil)
	if perr != nil {
		logPanic(perr, err)
		return perr
	}
	return v
}

const classifyCallback = "fusegrpc.Interceptor.Classify"

func (i *Interceptor) classifier() func(error) error {
	if i.Classify == nil {
		return DefaultClassify
	}
	return i.Classify
}

// logPanic logs verdict if it is the panic of a Classify that judged err.
func logPanic(verdict, err error) {
	if pe, ok := verdict.(*breaker.PanicError); ok && pe.Callback == classifyCallback {
		slog.Error("fusegrpc: Interceptor.Classify panicked; the call counts as a failure",
			"error", err, "panic", pe.Value, "stack", string(pe.Stack))
	}
}
