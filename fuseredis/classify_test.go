package fuseredis_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"github.com/fusebox-go/fusebox/fuseredis"
)

func TestDefaultClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // "success", "ignored" or "failure"
	}{
		{"no error is a success", nil, "success"},
		{"redis.Nil is a success", redis.Nil, "success"},
		{"the caller's cancellation is ignored", context.Canceled, "ignored"},
		{"go-redis's pool timeout is ignored", errors.New("redis: connection pool timeout"), "ignored"},
		{"a closed client is ignored", redis.ErrClosed, "ignored"},
		{"EOF is a failure", io.EOF, "failure"},
		{"a deadline is a failure", context.DeadlineExceeded, "failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := fuseredis.DefaultClassify(tt.err)
			got := "failure"
			switch {
			case v == nil:
				got = "success"
			case errors.Is(v, context.Canceled):
				got = "ignored"
			}
			assert.Equal(t, tt.want, got, "DefaultClassify(%v) = %v", tt.err, v)
			if v != nil {
				assert.ErrorIs(t, v, tt.err, "the verdict keeps the error")
			}
		})
	}
}

func TestIsBlocking(t *testing.T) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never used: commands are only built
	defer func() { _ = c.Close() }()
	tests := []struct {
		name string
		cmd  redis.Cmder
		want bool
	}{
		{"BLPOP blocks", redis.NewStringSliceCmd(ctx, "blpop", "q", 1), true},
		{"BRPOP in capitals blocks", redis.NewStringSliceCmd(ctx, "BRPOP", "q", 1), true},
		{"BLMOVE blocks", redis.NewStringCmd(ctx, "blmove", "a", "b", "left", "right", 1), true},
		{"BZPOPMIN blocks", redis.NewZWithKeyCmd(ctx, "bzpopmin", "z", 1), true},
		{"WAIT blocks", redis.NewIntCmd(ctx, "wait", 1, 100), true},
		{"XREAD with BLOCK blocks", redis.NewXStreamSliceCmd(ctx, "xread", "count", 1, "block", 100, "streams", "s", "$"), true},
		{"XREADGROUP with BLOCK blocks", redis.NewXStreamSliceCmd(ctx, "xreadgroup", "group", "g", "c", "block", 0, "streams", "s", ">"), true},
		{"XREAD without BLOCK does not", redis.NewXStreamSliceCmd(ctx, "xread", "count", 1, "streams", "s", "0"), false},
		{"XREAD of a stream named block does not", redis.NewXStreamSliceCmd(ctx, "xread", "streams", "block", "0"), false},
		{"XREAD with a count and BLOCK blocks", redis.NewXStreamSliceCmd(ctx, "XREAD", "COUNT", "10", "BLOCK", "0", "STREAMS", "s", "$"), true},
		{"XREADGROUP of a group named streams with BLOCK blocks", redis.NewXStreamSliceCmd(ctx, "xreadgroup", "group", "streams", "c1", "block", 0, "streams", "s", ">"), true},
		{"XREADGROUP of a consumer named streams with BLOCK blocks", redis.NewXStreamSliceCmd(ctx, "xreadgroup", "group", "g", "streams", "block", 0, "streams", "s", ">"), true},
		{"XREADGROUP of a group named block does not", redis.NewXStreamSliceCmd(ctx, "xreadgroup", "group", "block", "c1", "streams", "s", ">"), false},
		{"XREADGROUP of a consumer named block does not", redis.NewXStreamSliceCmd(ctx, "XREADGROUP", "GROUP", "g", "BLOCK", "NOACK", "STREAMS", "s", ">"), false},
		{"XREADGROUP with NOACK and BLOCK blocks", redis.NewXStreamSliceCmd(ctx, "xreadgroup", "group", "g", "c", "noack", "block", 0, "streams", "s", ">"), true},
		{"XREADGROUP of a stream named block does not", redis.NewXStreamSliceCmd(ctx, "xreadgroup", "group", "g", "c", "streams", "block", ">"), false},
		{"GET does not", redis.NewStringCmd(ctx, "get", "k"), false},
		{"BITCOUNT does not", redis.NewIntCmd(ctx, "bitcount", "k"), false},
		{"LPOP does not", redis.NewStringCmd(ctx, "lpop", "q"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, fuseredis.IsBlocking(tt.cmd), "IsBlocking(%v)", tt.cmd.Args())
		})
	}
	// The client's own XRead with a block time builds a blocking command.
	cmd := c.XRead(ctx, &redis.XReadArgs{Streams: []string{"s", "$"}, Block: time.Millisecond})
	assert.True(t, fuseredis.IsBlocking(cmd))
	// So does its XReadGroup, whatever the group and consumer are named
	// (built in a pipeline never executed: nothing is sent).
	p := c.Pipeline()
	for _, name := range []string{"streams", "block", "count", "group", "claim"} {
		xcmd := p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: name, Consumer: name, Streams: []string{"s", ">"}, Block: time.Millisecond})
		assert.True(t, fuseredis.IsBlocking(xcmd), "IsBlocking(%v)", xcmd.Args())
		xcmd = p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: name, Consumer: name, Streams: []string{"s", ">"}, Count: 1, Block: -1})
		assert.False(t, fuseredis.IsBlocking(xcmd), "IsBlocking(%v)", xcmd.Args())
	}
}
