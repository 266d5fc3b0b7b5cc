package breaker_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

var errBoom = errors.New("boom")

func newBreaker(t *testing.T, cfg breaker.Config) *breaker.Breaker {
	t.Helper()
	b, err := breaker.New(cfg)
	require.NoError(t, err)
	return b
}

// call runs fn through b the way a caller would: ask, call, report. It
// reports whether fn ran.
func call(b *breaker.Breaker, fn func() error) (ran bool, err error) {
	p, err := b.Allow()
	if err != nil {
		return false, err
	}
	err = fn()
	p.Done(err)
	return true, err
}

// fail makes one failing call; it returns ErrOpen if the call was refused.
func fail(b *breaker.Breaker) error {
	p, err := b.Allow()
	if err == nil {
		p.Done(errBoom)
	}
	return err
}

// succeed makes one successful call; it returns ErrOpen if refused.
func succeed(b *breaker.Breaker) error {
	p, err := b.Allow()
	if err == nil {
		p.Done(nil)
	}
	return err
}

// transitions writes events as "from>to:reason", one string each, for a
// test to compare with a list.
func transitions(events []breaker.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.From.String()+">"+e.To.String()+":"+e.Reason.String())
	}
	return out
}
