// Package overload compares inbound load shedders in the same run:
// fusebox's shed package, fusebox's per-route bulkheads alone
// (fusehttp/inbound), go-zero's core/load.AdaptiveShedder and Kratos's
// aegis/ratelimit/bbr, at their defaults and at the setting for one CPU,
// and no protection, in front of the same handlers.
//
// The command (cmd/overload) runs each cell of the matrix as a server
// process pinned to a fixed GOMAXPROCS on 127.0.0.1 and drives it from
// its own process with an open-loop load (requests sent on a schedule,
// whatever the answers) and a 1 s client deadline. Goodput is the
// requests answered 200 within the deadline, per second. make
// demo-overload runs it; docs/shedding.md has the figures.
package overload
