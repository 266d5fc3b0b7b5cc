package overload

import (
	"testing"

	"go.uber.org/goleak"
)

// The peers start goroutines when imported (go-zero's CPU statistics,
// Kratos's CPU sampler); every other goroutine must be gone.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/go-kratos/aegis/ratelimit/bbr.cpuproc"),
		goleak.IgnoreAnyFunction("github.com/go-kratos/aegis/internal/cpu.init.0.func1"),
		goleak.IgnoreAnyFunction("github.com/zeromicro/go-zero/core/proc.init.1.func1"),
		goleak.IgnoreAnyFunction("github.com/zeromicro/go-zero/core/stat.init.1.func1"),
	)
}
