// Command distributed is one process of a polite crawler fleet: start it
// several times, on one machine or many, against one Redis (or one Redis
// Cluster), and the processes share the queue of URLs (each fetched
// once), the robots.txt policies (fetched once per host for the fleet)
// and each host's pace (Crawl-delay holds for the fleet, not per
// process). Each process exits
// when the shared queue is empty and no process is working.
//
// Usage:
//
//	cd redisfleet && go run ./examples/distributed [flags] URL...
//
// Flags (before the URLs):
//
//	-redis URL      the fleet's Redis (default $REDIS_URL, else
//	                redis://127.0.0.1:6379/0).
//	-redis-cluster URL  the fleet's Redis Cluster instead, in go-redis's
//	                cluster URL form:
//	                redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002
//	                (one node is enough; the others are found from it).
//	-name N         the crawl's name (default "distributed"): processes with
//	                the same name share one queue; the queue's seen set stays
//	                in Redis, so a new crawl of the same URLs needs a new
//	                name (or an emptied Redis).
//	-threads N      queue threads of this process (default 4).
//	-depth N        follow links on the same host up to N hops from a start
//	                URL (default 2; 0: the start URLs only).
//	-lease D        how long a dead process holds a host, a robots.txt
//	                fetch or a queued request (default 10s); every Redis
//	                call is bounded by a third of it, at most 2s.
//	-outage D       how long to wait for an unreachable Redis before giving
//	                up (default 1m).
//	-min-delay D    least time between two requests to one host (default
//	                1s); a Crawl-delay can raise it.
//	-default-delay D  time between two requests to a host whose robots.txt
//	                gives no Crawl-delay (default 1s).
//	-connect ADDR   send every request to ADDR (host:port) whatever its
//	                URL's host, with the URL's Host header: to try the fleet
//	                against a local test server standing for many hosts.
//
// Every process queues the start URLs (the first one to do so wins; the
// others are told they are queued already). Standard output has one line
// per page this process handled: "fetched STATUS URL", or "stopped URL:
// REASON" (robots.txt disallows it, an error), and at the end
// "round trips by call: ..." (the process's Redis round trips by kind of
// call) and "done: N fetched, M stopped (pid P ...)". Warnings (Redis lost and back)
// go to standard error. The exit status is 0 when the crawl is over, 1
// when it cannot go on (Redis unreachable: the message says so), 2 on a
// usage error, 130 when interrupted.
package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/fleetfrontier"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	redisURL, clusterURL    string
	name, connect           string
	threads, depth          int
	lease, outage, minDelay time.Duration
	defaultDelay            time.Duration
	urls                    []string
}

func parse(args []string, stderr io.Writer) (options, error) {
	def := os.Getenv("REDIS_URL")
	if def == "" {
		def = "redis://127.0.0.1:6379/0"
	}
	var o options
	fs := flag.NewFlagSet("distributed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.redisURL, "redis", def, "the fleet's Redis URL")
	fs.StringVar(&o.clusterURL, "redis-cluster", "", "the fleet's Redis Cluster, as redis://host:port?addr=host2:port2&addr=host3:port3")
	fs.StringVar(&o.name, "name", "distributed", "the crawl's name: processes with the same name share one queue")
	fs.IntVar(&o.threads, "threads", 4, "queue threads of this process")
	fs.IntVar(&o.depth, "depth", 2, "follow same-host links up to this many hops")
	fs.DurationVar(&o.lease, "lease", redisfleet.DefaultLease, "how long a dead process holds a host, a fetch or a request")
	fs.DurationVar(&o.outage, "outage", fleetfrontier.DefaultOutageLimit, "how long to wait for an unreachable Redis")
	fs.DurationVar(&o.minDelay, "min-delay", time.Second, "least time between two requests to one host")
	fs.DurationVar(&o.defaultDelay, "default-delay", time.Second, "time between two requests to a host without Crawl-delay")
	fs.StringVar(&o.connect, "connect", "", "send every request to this host:port (a local test server)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	redisSet := false
	fs.Visit(func(f *flag.Flag) { redisSet = redisSet || f.Name == "redis" })
	if redisSet && o.clusterURL != "" {
		return o, errors.New("-redis and -redis-cluster: give one")
	}
	o.urls = fs.Args()
	for _, u := range o.urls {
		if strings.HasPrefix(u, "-") {
			// flag stops at the first URL; a flag after it would be queued as a URL.
			return o, fmt.Errorf("%s after a URL: flags must come before the URLs", u)
		}
	}
	switch {
	case len(o.urls) == 0:
		return o, errors.New("no start URL given")
	case o.threads < 1:
		return o, errors.New("-threads must be at least 1")
	case o.depth < 0:
		return o, errors.New("-depth must not be negative")
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "distributed:", err)
			fmt.Fprintln(stderr, "usage: distributed [-redis URL | -redis-cluster URL] [flags] URL...")
		}
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	pid := os.Getpid()

	var rdb redis.UniversalClient
	if o.clusterURL != "" {
		copts, err := redisfleet.ParseClusterURL(o.clusterURL)
		if err != nil {
			fmt.Fprintln(stderr, "distributed:", err)
			return 2
		}
		copts.MaxRetries = 1
		rdb = redis.NewClusterClient(copts)
	} else {
		ropts, err := redisfleet.ParseURL(o.redisURL)
		if err != nil {
			fmt.Fprintln(stderr, "distributed:", err)
			return 2
		}
		ropts.MaxRetries = 1
		rdb = redis.NewClient(ropts)
	}
	defer rdb.Close()
	var trips roundTrips
	rdb.AddHook(&trips)
	ctx := context.Background()
	fleet, err := redisfleet.New(ctx, rdb, redisfleet.Config{Lease: o.lease, CallTimeout: min(redisfleet.DefaultCallTimeout, o.lease/3), Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "distributed: cannot start: %v\n", err)
		return 1
	}
	defer fleet.Close()

	var transport http.RoundTripper = http.DefaultTransport.(*http.Transport).Clone()
	if o.connect != "" {
		d := &net.Dialer{Timeout: 5 * time.Second}
		transport = &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, o.connect)
			},
			MaxIdleConnsPerHost: 16,
		}
	}
	c := colly.NewCollector(
		colly.UserAgent("PoliteCrawlFleet/0.1 (pid " + strconv.Itoa(pid) + "; +https://github.com/politecrawl/robots)"),
	)
	plugin, err := robots.Attach(c,
		robots.WithPolicy(policy.WithStore(fleet.Store())),
		robots.WithLimiter(fleet.Limiter(redisfleet.LimiterConfig{})),
		robots.WithMinDelay(o.minDelay),
		robots.WithDefaultDelay(o.defaultDelay),
		robots.WithTransport(transport),
		robots.WithLogger(log),
	)
	if err != nil {
		fmt.Fprintln(stderr, "distributed:", err)
		return 1
	}
	defer plugin.Close()
	front := fleetfrontier.New(fleet, fleetfrontier.Config{Name: o.name, OutageLimit: o.outage, Batching: 100 * time.Millisecond})
	defer front.Close()
	robots.AttachFrontier(c, front)
	q, err := queue.New(o.threads, front)
	if err != nil {
		fmt.Fprintln(stderr, "distributed:", err)
		return 1
	}

	var (
		mu               sync.Mutex
		fetched, stopped int
	)
	c.OnResponse(func(r *colly.Response) {
		mu.Lock()
		fetched++
		fmt.Fprintf(stdout, "fetched %d %s\n", r.StatusCode, r.Request.URL)
		mu.Unlock()
	})
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		stopped++
		fmt.Fprintf(stdout, "stopped %s: %v\n", r.Request.URL, err)
		mu.Unlock()
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		if e.Request.Depth >= o.depth {
			return
		}
		ref, err := url.Parse(e.Attr("href"))
		if err != nil {
			return
		}
		u := e.Request.URL.ResolveReference(ref)
		if u.Host != e.Request.URL.Host || (u.Scheme != "http" && u.Scheme != "https") {
			return
		}
		u.Fragment = ""
		b, err := (&colly.Request{URL: u, Method: "GET", Depth: e.Request.Depth + 1, Ctx: colly.NewContext()}).Marshal()
		if err != nil {
			return
		}
		// Straight to the frontier: it wakes every process's GetRequest
		// through Redis, so Queue.AddRequest's wake-up is not needed.
		if err := front.AddRequest(b); err != nil && !errors.Is(err, frontier.ErrSeen) {
			log.Warn("distributed: cannot queue a link", slog.String("url", u.String()), slog.Any("error", err))
		}
	})

	for _, u := range o.urls {
		if err := q.AddURL(u); err != nil && !errors.Is(err, frontier.ErrSeen) {
			fmt.Fprintf(stderr, "distributed: cannot queue %s: %v\n", u, err)
			return 2
		}
	}

	// A watchdog: Redis unreachable for longer than -outage ends the
	// crawl. Threads waiting for a host's turn (the fleet limiter waits
	// for Redis to come back) are cancelled, so that the queue can stop.
	crawlCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.Context = crawlCtx
	var gaveUp time.Duration
	go func() {
		var downSince time.Time
		for {
			select {
			case <-crawlCtx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
			pctx, pcancel := context.WithTimeout(crawlCtx, time.Second)
			err := rdb.Ping(pctx).Err()
			pcancel()
			switch {
			case err == nil:
				downSince = time.Time{}
			case downSince.IsZero():
				downSince = time.Now()
			case time.Since(downSince) > o.outage:
				mu.Lock()
				gaveUp = time.Since(downSince)
				mu.Unlock()
				q.Stop()
				cancel()
				return
			}
		}
	}()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	interrupted := false
	go func() {
		if _, ok := <-sig; ok {
			mu.Lock()
			interrupted = true
			mu.Unlock()
			q.Stop()
		}
	}()
	runErr := q.Run(c)
	mu.Lock()
	defer mu.Unlock()
	st := front.Stats()
	fmt.Fprintf(stdout, "round trips by call: %s\n", &trips)
	fmt.Fprintf(stdout, "done: %d fetched, %d stopped (pid %d; handed %d, taken over from dead processes %d, queued again after a Redis loss %d; Redis round trips %d, wake-ups heard %d)\n",
		fetched, stopped, pid, st.Handed, st.Reaped, st.Recovered, trips.n.Load(), fleet.WakeupsHeard())
	switch {
	case gaveUp > 0:
		fmt.Fprintf(stdout, "stopped: the crawl cannot go on: Redis unreachable for %s\n", gaveUp.Round(time.Second))
		return 1
	case runErr != nil:
		fmt.Fprintf(stdout, "stopped: the crawl cannot go on: %v\n", runErr)
		return 1
	case interrupted:
		fmt.Fprintln(stdout, "stopped: interrupted")
		return 130
	}
	return 0
}

// roundTrips is a go-redis hook counting the client's round trips: one
// per command sent alone, one per pipeline (on one server; a Cluster
// pipeline is one per node it touches, counted once here), and each by
// kind (see callKind). Pub/Sub traffic goes through neither hook.
type roundTrips struct {
	n      atomic.Int64
	mu     sync.Mutex
	byKind map[string]int64
}

func (*roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (t *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		t.count(callKind(cmd))
		return next(ctx, cmd)
	}
}

func (t *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		kinds := make([]string, len(cmds))
		for i, c := range cmds {
			kinds[i] = callKind(c)
		}
		slices.Sort(kinds)
		t.count("pipe(" + strings.Join(slices.Compact(kinds), "+") + ")")
		return next(ctx, cmds)
	}
}

func (t *roundTrips) count(kind string) {
	t.n.Add(1)
	t.mu.Lock()
	if t.byKind == nil {
		t.byKind = map[string]int64{}
	}
	t.byKind[kind]++
	t.mu.Unlock()
}

// String lists the round trips by kind: "kind=n" separated by spaces,
// sorted by kind.
func (t *roundTrips) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var s []string
	for k, n := range t.byKind {
		s = append(s, k+"="+strconv.FormatInt(n, 10))
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}

// callKind names a command: its name, and for a script call (EVALSHA)
// (EVAL too) the first 8 hex digits of the script's SHA-1 and, for the limiter's
// script (7 keys), its operation.
func callKind(c redis.Cmder) string {
	name := c.Name()
	if name != "evalsha" && name != "eval" {
		return name
	}
	a := c.Args()
	if len(a) < 3 {
		return name
	}
	sha, _ := a[1].(string)
	if name == "eval" {
		// The script itself (go-redis falls back to EVAL on NOSCRIPT).
		sum := sha1.Sum([]byte(sha))
		sha = hex.EncodeToString(sum[:])
	}
	k := "sha:" + sha[:min(len(sha), 8)]
	if n, _ := a[2].(int); n == 7 && len(a) > 3+n {
		if op, ok := a[3+n].(string); ok {
			k += ":" + op
		}
	}
	return k
}
