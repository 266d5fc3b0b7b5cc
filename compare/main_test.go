package compare_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Goroutines that are not leaks of the code under test:
//   - everything alive when TestMain starts: importing ants starts its
//     default pool (two goroutines) during package initialization;
//   - hystrix-go's two collectors per command, started on a command's
//     first use and never stopped (hystrix.Flush forgets the command but
//     leaves them blocked forever); and the metric goroutines they start;
//   - go-resiliency's timer: every opening starts a goroutine that sleeps
//     for the reset timeout before it half-opens the breaker.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreCurrent(),
		goleak.IgnoreTopFunction("github.com/afex/hystrix-go/hystrix.(*metricExchange).Monitor"),
		goleak.IgnoreTopFunction("github.com/afex/hystrix-go/hystrix.(*poolMetrics).Monitor"),
		goleak.IgnoreAnyFunction("github.com/afex/hystrix-go/hystrix.(*metricExchange).IncrementMetrics"),
		goleak.IgnoreAnyFunction("github.com/eapache/go-resiliency/breaker.(*Breaker).timer"),
	)
}
