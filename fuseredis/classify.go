package fuseredis

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// DefaultClassify tells the node's failures from its answers:
//
//   - nil and every reply of the server are successes (nil): redis.Nil,
//     MOVED and ASK redirections, script errors (NOSCRIPT, "ERR Error
//     running script"), WRONGTYPE, syntax and permission errors. The node
//     answered.
//   - replies that say the node cannot serve now are failures: LOADING,
//     BUSY (a script is hogging it), MASTERDOWN, CLUSTERDOWN and "ERR max
//     number of clients reached".
//   - go-redis's connection pool timeout ("redis: connection pool
//     timeout", redis.ErrPoolTimeout in the versions that export it) and
//     redis.ErrClosed are ignored: the client ran out of its own
//     connections or was closed, and the node did nothing wrong. The
//     returned error matches context.Canceled, which the breaker's default
//     classifier ignores, and unwraps to err.
//   - the caller's context.Canceled is ignored too (returned as is).
//   - anything else is a failure (returned as is): refused or reset
//     connections, failed dials, i/o timeouts, EOF, a deadline.
func DefaultClassify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return err
	case isPoolTimeout(err), errors.Is(err, redis.ErrClosed):
		return &ignoredError{err}
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		if unavailable(reply.Error()) {
			return err
		}
		return nil
	}
	return err
}

// poolTimeout is the message of go-redis's pool timeout, an error that
// versions before v9.9 keep in an internal package.
const poolTimeout = "redis: connection pool timeout"

func isPoolTimeout(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == poolTimeout {
			return true
		}
	}
	return false
}

// unavailable reports whether a server reply says the node cannot serve.
func unavailable(msg string) bool {
	for _, p := range [...]string{"LOADING ", "BUSY ", "MASTERDOWN ", "CLUSTERDOWN "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return msg == "ERR max number of clients reached"
}

// ignoredError is the verdict of an error the breaker should ignore: it
// matches context.Canceled and the error itself.
type ignoredError struct{ err error }

func (e *ignoredError) Error() string   { return e.err.Error() }
func (e *ignoredError) Unwrap() []error { return []error{e.err, context.Canceled} }
