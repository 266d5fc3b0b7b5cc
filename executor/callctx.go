package executor

import (
	"time"

	"github.com/fusebox-go/fusebox/internal/callctx"
)

// callCtx is the context a protected function receives, embedded in the
// call: a callctx.Ctx, with the deadline read on its executor's clock.
type callCtx struct {
	callctx.Ctx
	ex *Executor // the call's; its epoch is the clock of Node.At
}

func (c *callCtx) Deadline() (time.Time, bool) {
	return c.ex.env.epoch.Add(time.Duration(c.Node.At)), true
}
