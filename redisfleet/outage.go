package redisfleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// callError wraps an error of a Redis call: a reply error (redis.Error) as
// it is, anything else (network, timeout) as [ErrUnavailable]. An OOM
// reply is [ErrUnavailable] too, and its message names the cause and the
// setting to raise (see oomRun).
func (f *Fleet) callError(op string, err error) error {
	if isReplyError(err) {
		return fmt.Errorf("redisfleet: %s: %w", op, err)
	}
	if isOOM(err) {
		return fmt.Errorf("redisfleet: %s: %w: Redis refuses writes, out of memory (%s): raise its maxmemory, or free memory: %w",
			op, ErrUnavailable, f.noteOOM(err), err)
	}
	return fmt.Errorf("redisfleet: %s: %w: %w", op, ErrUnavailable, err)
}

// isOOM reports whether err is Redis's OOM reply: a write refused because
// its memory is above maxmemory (under noeviction, or with nothing left to
// evict). Redis still answers reads then.
func isOOM(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "OOM")
}

// oomRun is a run of OOM replies, each within oomGap of the previous: a
// Redis that refuses writes (its maxmemory reached) while it answers
// reads. The fleet waits through it as through an outage; a frontier ends
// the crawl once it lasts longer than its outage limit (oomError).
type oomRun struct {
	mu          sync.Mutex
	first, last time.Time
	logged      bool   // the run's warning is logged
	mem         string // maxmemory and used_memory, read at the run's start
	reply       string // the latest OOM reply
}

// oomGap ends a run of OOM replies: none for this long (the retries of a
// waiting fleet come every 2 s at most) means Redis took writes again.
func (f *Fleet) oomGap() time.Duration { return max(f.cfg.lease, 5*time.Second) }

// noteOOM records an OOM reply and returns what Redis's maxmemory and
// used_memory are (read once per run, bounded by the call timeout).
func (f *Fleet) noteOOM(err error) string {
	now := time.Now()
	o := &f.oom
	o.mu.Lock()
	if o.last.IsZero() || now.Sub(o.last) > f.oomGap() {
		o.first, o.logged, o.mem = now, false, ""
	}
	o.last, o.reply = now, err.Error()
	mem := o.mem
	o.mu.Unlock()
	if mem == "" {
		mem = f.maxmemory()
		o.mu.Lock()
		o.mem = mem
		o.mu.Unlock()
	}
	return mem
}

// maxmemory describes the maxmemory and used_memory of the Redis server (on
// a Cluster, of every master whose maxmemory is set), for an OOM error:
// "maxmemory 1048576 at 127.0.0.1:6379, used_memory 2031616".
func (f *Fleet) maxmemory() string {
	ctx, cancel := context.WithTimeout(context.Background(), f.cfg.callTimeout)
	defer cancel()
	var (
		mu  sync.Mutex
		out []string
	)
	one := func(ctx context.Context, c redis.Cmdable, addr string) error {
		v, err := c.ConfigGet(ctx, "maxmemory").Result()
		if err != nil {
			mu.Lock()
			out = append(out, fmt.Sprintf("maxmemory unknown at %s: CONFIG GET: %v", addr, err))
			mu.Unlock()
			return nil
		}
		if v["maxmemory"] == "0" {
			return nil // no limit on this node: not the one refusing
		}
		d := "maxmemory " + v["maxmemory"]
		if addr != "" {
			d += " at " + addr
		}
		if info, err := c.Info(ctx, "memory").Result(); err == nil {
			for _, line := range strings.Split(info, "\r\n") {
				if u, ok := strings.CutPrefix(line, "used_memory:"); ok {
					d += ", used_memory " + u
				}
			}
		}
		mu.Lock()
		out = append(out, d)
		mu.Unlock()
		return nil
	}
	switch c := f.rdb.(type) {
	case *redis.ClusterClient:
		c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return one(ctx, n, n.Options().Addr) })
	case *redis.Client:
		one(ctx, c, c.Options().Addr)
	default:
		one(ctx, f.rdb, "")
	}
	if len(out) == 0 {
		return "maxmemory unknown"
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// setOutageLimit records the outage limit of a frontier of the Fleet: the
// limiter's Acquire gives up waiting through OOM replies after the largest
// of them (see outageLimit).
func (f *Fleet) setOutageLimit(d time.Duration) {
	for {
		old := f.outLim.Load()
		if int64(d) <= old || f.outLim.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// outageLimit is how long the limiter's Acquire waits through a run of
// OOM replies before it returns the error: the largest outage limit of the
// Fleet's frontiers, which end the crawl then, else a minute (the
// frontier's default).
func (f *Fleet) outageLimit() time.Duration {
	if d := f.outLim.Load(); d > 0 {
		return time.Duration(d)
	}
	return time.Minute
}

// oomError returns an error when Redis has refused writes with OOM
// (replies each within oomGap of the previous, the latest one recent)
// for longer than limit, else nil; its message starts "redisfleet: " and
// what, then, when kept is not nil, the requests known to this process
// not crawled (kept()). It wraps [ErrUnavailable].
func (f *Fleet) oomError(limit time.Duration, what string, kept func() int) error {
	o := &f.oom
	o.mu.Lock()
	if o.first.IsZero() || time.Since(o.last) > f.oomGap() || o.last.Sub(o.first) < limit {
		o.mu.Unlock()
		return nil
	}
	d, mem, reply := o.last.Sub(o.first).Round(time.Second), o.mem, o.reply
	o.mu.Unlock()
	if kept != nil {
		what += fmt.Sprintf(": %d requests known to this process not crawled", kept())
	}
	return fmt.Errorf("redisfleet: %s: Redis has refused writes for %s, out of memory (%s; %q): raise its maxmemory, or free memory: %w",
		what, d, mem, reply, ErrUnavailable)
}

// isReplyError reports whether err is an answer of Redis (a script error,
// WRONGTYPE...), not a failure to reach it. LOADING, READONLY, MASTERDOWN
// and the like mean the server cannot serve now: they count as
// unavailable; so does OOM (an evicting Redis at its maxmemory refuses a
// write it cannot evict room for: later, it may).
func isReplyError(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) || errors.Is(err, redis.Nil) {
		return false
	}
	msg := re.Error()
	for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "BUSY", "MAXCLIENTS", "OOM"} {
		if strings.HasPrefix(msg, p) {
			return false
		}
	}
	return true
}

var (
	redisLog     atomic.Pointer[slog.Logger] // the logger of the most recent New
	redisLogOnce sync.Once
)

// redisLogger hands go-redis's log lines to redisLog at Debug level: the
// fleet reports an outage once itself (see [WithLogger]).
type redisLogger struct{}

func (redisLogger) Printf(ctx context.Context, format string, v ...any) {
	if l := redisLog.Load(); l != nil && l.Enabled(ctx, slog.LevelDebug) {
		l.DebugContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
	}
}

// outage logs the start of an outage once; recovered logs its end. A run
// of OOM replies (Redis answers reads, refuses writes) is logged once, as
// such, naming maxmemory: reads that succeed meanwhile do not end it.
// The line is a warning if it starts an incident (incidentLevel), else
// Info.
func (f *Fleet) outage(op string, err error) {
	if isOOM(err) {
		o := &f.oom
		o.mu.Lock()
		log := !o.logged
		o.logged = true
		mem := o.mem
		o.mu.Unlock()
		if log {
			f.log.Log(context.Background(), f.incidentLevel(time.Now()), "redisfleet: Redis refuses writes: out of memory (OOM); raise its maxmemory, or free memory", slog.String("op", op),
				slog.String("memory", mem), slog.Any("error", err), slog.String("on_redis_down", f.cfg.onDown.String()))
		} else {
			f.incidentGoesOn(time.Now())
		}
		return
	}
	if f.down.CompareAndSwap(false, true) {
		f.log.Log(context.Background(), f.incidentLevel(time.Now()), "redisfleet: Redis is unavailable", slog.String("op", op), slog.Any("error", err),
			slog.String("on_redis_down", f.cfg.onDown.String()))
		return
	}
	f.incidentGoesOn(time.Now())
}

// recovered ends an outage: Redis answered a call. The incident goes on
// until then, so that a data loss found next is part of it.
func (f *Fleet) recovered() {
	if f.down.Load() && f.down.CompareAndSwap(true, false) {
		f.incidentGoesOn(time.Now())
		f.log.Info("redisfleet: Redis answers again")
	}
}
