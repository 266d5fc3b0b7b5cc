package fleet_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fleet"
)

// sentinels is a master, its replica and three sentinels (quorum 2), all
// on 127.0.0.1, that fail the master over 300 ms after it stops answering.
type sentinels struct {
	master, replica *server
	sentinels       []*server
}

const masterName = "fleet"

func startSentinels(t *testing.T) *sentinels {
	t.Helper()
	if _, err := exec.LookPath("redis-sentinel"); err != nil {
		t.Fatalf("redis-sentinel is not installed (it is the Debian package redis-sentinel; `make redis-sentinel` installs it): %v", err)
	}
	m := startRedis(t)
	r := startRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(m.port))
	s := &sentinels{master: m, replica: r}
	for range 3 {
		dir := t.TempDir()
		conf := filepath.Join(dir, "sentinel.conf")
		port := freePort(t)
		require.NoError(t, os.WriteFile(conf, []byte(fmt.Sprintf(
			"port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 2\n"+
				"sentinel down-after-milliseconds %s 300\nsentinel failover-timeout %s 3000\nsentinel parallel-syncs %s 1\n",
			port, dir, masterName, m.port, masterName, masterName, masterName)), 0o600))
		sn := &server{t: t, bin: "redis-sentinel", port: port, args: []string{conf, "--loglevel", "warning"}}
		sn.start()
		t.Cleanup(sn.stop)
		s.sentinels = append(s.sentinels, sn)
	}
	// Ready once the replica has synced and every sentinel knows it.
	c := s.sentinelClient(t)
	eventually(t, 10*time.Second, "the sentinels see the replica", func() bool {
		reps, err := c.Replicas(context.Background(), masterName).Result()
		return err == nil && len(reps) == 1 && reps[0]["master-link-status"] == "ok"
	})
	return s
}

func (s *sentinels) addrs() []string {
	var out []string
	for _, sn := range s.sentinels {
		out = append(out, sn.addr())
	}
	return out
}

func (s *sentinels) sentinelClient(t *testing.T) *redis.SentinelClient {
	c := redis.NewSentinelClient(&redis.Options{Addr: s.sentinels[0].addr(), DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// client is a failover client: it asks the sentinels for the master.
func (s *sentinels) client(t *testing.T) *redis.Client {
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: masterName, SentinelAddrs: s.addrs(),
		DialTimeout: 200 * time.Millisecond, ReadTimeout: opTimeout, WriteTimeout: opTimeout, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// The master dies during an incident. The sentinels promote its replica;
// every link comes back through the failover client, the supplier that
// stays down stays open on every replica (and a replica started after the
// failover learns it), the supplier that recovered during the failover is
// closed on every replica, and no Submit waits for any of it.
func TestSentinelFailoverDuringAnIncident(t *testing.T) {
	ss := startSentinels(t)
	rs := make([]*replica, 3)
	for i := range rs {
		rs[i] = startReplicaWith(t, ss.client(t), fmt.Sprintf("r%d", i))
	}
	ex := func(r *replica, name string) *executor.Executor {
		ex, err := r.link.Group().Executor(name)
		require.NoError(t, err)
		return ex
	}
	// payments stays down; search recovers during the failover, and only
	// r0 has search traffic, so the others can learn its close only from
	// the fleet.
	payments, search := &supplier{}, &supplier{}
	var slowest, over atomic.Int64
	var submits atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	drive := func(ex *executor.Executor, s *supplier, who string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(2 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				start := time.Now()
				f, err := executor.Submit(context.Background(), ex, s.call(who))
				d := int64(time.Since(start))
				submits.Add(1)
				if d > int64(time.Millisecond) {
					over.Add(1)
				}
				for cur := slowest.Load(); d > cur && !slowest.CompareAndSwap(cur, d); cur = slowest.Load() {
				}
				if err == nil {
					_, _ = f.Await(context.Background())
				}
			}
		}()
	}
	for _, r := range rs {
		drive(ex(r, "payments"), payments, r.name)
	}
	drive(ex(rs[0], "search"), search, rs[0].name)

	ex(rs[0], "payments").Breaker().Trip(breaker.Saturation)
	ex(rs[0], "search").Breaker().Trip(breaker.Saturation)
	for _, r := range rs {
		for _, name := range []string{"payments", "search"} {
			eventually(t, patience, r.name+" opens "+name, func() bool { return ex(r, name).Breaker().State() == breaker.Open })
		}
	}
	// The trips have reached the replica before the master dies.
	rc := ss.replica.client(t)
	eventually(t, patience, "the open keys are replicated", func() bool {
		return rc.Exists(context.Background(), "{shop}:open:payments", "{shop}:open:search").Val() == 2
	})

	search.set(true, false)
	ss.master.stop()
	for _, r := range rs {
		eventually(t, 15*time.Second, r.name+" link back after the failover", func() bool {
			st := r.link.Stats()
			return st.Up && st.Sessions >= 2
		})
	}
	// r0 closes search on its own probe first; the others hear it from
	// the channel or, if their link came back after r0's, from the key.
	eventually(t, patience, "r0 closes search on its own probe", func() bool { return ex(rs[0], "search").Breaker().State() == breaker.Closed })
	for _, r := range rs[1:] {
		eventually(t, patience, r.name+" learns search's close", func() bool { return ex(r, "search").Breaker().State() == breaker.Closed })
		assert.Equal(t, breaker.Remote, ex(r, "search").Breaker().Stats().Reason)
		assert.Empty(t, callsBy(search, r.name), "%s never probed search", r.name)
	}
	late := startReplicaWith(t, ss.client(t), "late")
	eventually(t, patience, "a replica started after the failover learns payments is open", func() bool {
		return late.state(t).State == breaker.Open && late.state(t).Reason == breaker.Remote
	})
	close(done)
	wg.Wait()
	for _, r := range rs {
		for _, e := range r.rec.Events() {
			if e.Name == "payments" {
				assert.NotEqual(t, breaker.Closed, e.To, "%s: payments never closed: %v", r.name, e)
			}
		}
	}
	t.Logf("%d Submits; the slowest took %v; %d over 1 ms", submits.Load(), time.Duration(slowest.Load()), over.Load())
	assert.Less(t, time.Duration(slowest.Load()), noWait, "no Submit waited for the failover")
}

// startReplicaWith starts a replica of the test's group linked through c.
func startReplicaWith(t *testing.T, c redis.UniversalClient, name string) *replica {
	t.Helper()
	r := &replica{name: name}
	g := groupConfig()
	g.OnTransition = r.rec.Listen
	cfg := linkConfig(nil, t, name)
	cfg.Client = c
	l, err := fleet.New(cfg, g)
	require.NoError(t, err)
	r.link = l
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = l.Close(ctx)
	})
	eventually(t, patience, name+" link up", func() bool { return l.Stats().Up })
	r.payments(t)
	return r
}
