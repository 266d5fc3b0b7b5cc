// Package fuseredis protects the commands a go-redis v9 client sends with
// one bulkhead and one circuit breaker per Redis node: a Hook runs every
// command and pipeline of a node's client on the executor that an
// executor.Group keeps for the node's address.
//
// The story: the sessions node of a cache hangs (a long Lua script, a
// fork on a swapping machine, a paused VM). Without protection every
// request that touches it waits out go-redis's read timeout and holds its
// worker that long. With the hook, once the node's slots are held by
// commands far older than the node normally takes, the next command is
// refused with executor.ErrSaturated and trips the node's breaker in that
// same call; from then on its commands fail at once with breaker.ErrOpen,
// nothing sent, while the other nodes, each with a breaker of its own, go
// on answering. After the reset timeout one command probes the node; its
// answer closes the breaker.
//
//	g, err := executor.NewGroup(executor.GroupConfig{
//		Default: executor.Config{
//			Slots:             20, // at most the client's PoolSize
//			InvocationTimeout: time.Second,
//			Breaker:           breaker.Config{ResetTimeout: 2 * time.Second},
//		},
//	})
//	...
//	rdb := redis.NewClient(&redis.Options{Addr: "10.0.0.7:6379", ContextTimeoutEnabled: true})
//	rdb.AddHook(fuseredis.New(g, rdb.Options().Addr))
//	...
//	v, err := rdb.Get(ctx, "session:42").Result()
//	switch {
//	case errors.Is(err, redis.Nil):
//		// no such key: an answer, a success for the breaker
//	case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy):
//		// refused at once, nothing sent: the error names the node
//	}
//
// # One supplier per node
//
// A Hook belongs to one node's client and names its supplier after the
// node's address (Hook.Supplier renames it). A ClusterClient or a Ring
// keeps one client per node; give each its own Hook as go-redis makes it,
// before the first command:
//
//	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds})
//	cluster.OnNewNode(func(node *redis.Client) {
//		node.AddHook(fuseredis.New(g, node.Options().Addr))
//	})
//
// A Hook added to the ClusterClient itself would see every command before
// it is routed, and could not tell one node from another: add it to the
// nodes. A FailoverClient (Sentinel) has one client whose address changes
// with the master: set Supplier to the master's name.
//
// # What is a slot, what is an answer
//
// A command holds one slot from the moment it is admitted until its reply
// is read; a pipeline or a MULTI/EXEC transaction holds one slot for all
// its commands. go-redis's retries (MaxRetries) and the connection set-up
// it does inside a command (dial, HELLO, AUTH) are part of that command.
// The command runs with the caller's context and the lease's deadline (the
// earlier of the caller's and the invocation deadline): with
// Options.ContextTimeoutEnabled go-redis puts that deadline on the socket,
// so a hung node costs the caller at most the invocation timeout; without
// it go-redis waits out ReadTimeout, and the slot stays held that long (the
// breaker records the timeout at the invocation deadline either way).
// go-redis's retries end there too: the context's Done closes at the
// invocation deadline for the back-off before a retry and the retry's
// waits. A wait for a connection is bounded by go-redis's PoolTimeout, the
// caller's context and the invocation deadline. Keep Slots at or below
// PoolSize, so that a slot always finds a connection.
//
// The breaker sees one verdict per command, the one Hook.Classify returns
// (DefaultClassify by default): redis.Nil, MOVED/ASK redirections, script
// errors and every other reply of the server are answers, successes;
// refused or reset connections, failed dials, i/o timeouts and replies
// that say the node cannot serve (LOADING, BUSY, MASTERDOWN, CLUSTERDOWN)
// are failures; the caller's own cancellation is ignored. go-redis's pool
// timeout ("redis: connection pool timeout") is ignored as well: it says
// the client ran out of its own connections, not that the node failed, and
// a node that hangs is caught anyway, by the slots its commands hold. The
// caller gets the command's own result, but for a command or pipeline that
// the invocation timeout ended (not the caller's own deadline): its error,
// and that of each of the pipeline's commands that got no reply, matches
// executor.ErrTimeout and wraps go-redis's own (the socket's i/o timeout,
// or context.DeadlineExceeded when the deadline ended a retry's back-off).
// Replies, redis.Nil among them, are never wrapped.
//
// A dial that fails outside any command (a pool refill for MinIdleConns, a
// pub/sub connection) counts as a failure of the node while its breaker is
// closed; a dial inside a command is counted once, as that command's error.
// go-redis v9.15 and later dial a command's connection on a goroutine of
// their own, retrying up to Options.DialerRetries (5) times, out of the
// command's context, and go on retrying after the command has given up:
// there a dial that fails while any command of the node is being sent, or
// within a second of the end of one that failed, is taken for a command's,
// and not counted on its own.
//
// # Blocking commands
//
// BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP,
// WAIT, WAITAOF and XREAD or XREADGROUP with BLOCK wait on the server by
// design, for as long as they asked (IsBlocking says which). They must not
// look stuck, nor take the slots of the commands that should not wait, so
// they go through the breaker only: admitted without a slot while it is
// closed, and their outcome recorded on the breaker like any command's. A
// blocking command is never a probe (it could hold the probe's place for as
// long as it blocks): while the breaker is open or half-open the hook sends
// a PING through the bulkhead on its behalf, refused until the reset
// timeout has passed and then the probe, and lets the blocking command go
// only once that answer has closed the breaker; otherwise it is refused
// with breaker.ErrOpen. A client of blocking commands alone thus still
// lets the breaker close. They are bounded by their own block time and go-redis's
// read timeout on top of it, not by the invocation timeout. Since they wait
// by design, for as long as their caller lets them, one that the caller's
// context ends (its deadline, go-redis's i/o timeout at that deadline, or
// a cancellation) is recorded as ignored, not as a failure: a consumer's
// BLPOP 0 under a deadline of its own never trips a healthy node. A pipeline
// that holds a blocking command is treated as one. Pub/sub receives do not
// go through go-redis's command hooks at all: a subscription holds no slot,
// and only the dials of its connections are counted.
//
// # Refusals
//
// A refused command is not sent. Its error is the executor's
// *executor.RejectedError, which names the node's supplier and reason
// ("fusebox: 10.0.0.7:6379: rejected: open") and matches breaker.ErrOpen
// or executor.ErrSaturated (executor.ErrClosed once the group is closed)
// with errors.Is; every command of a refused pipeline carries it.
package fuseredis
