package redisfleet_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/redisfleet"
)

// fleet is the handle the examples below use, made once per process as in
// Example and ExampleNew (as database/sql's examples share one *sql.DB).
var fleet *redisfleet.Fleet

// redisURL is the Redis of the examples: $REDIS_URL, else a local one.
func redisURL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// Every crawler process of a fleet makes the same plugin: policies and
// per-host pace come from Redis, so N processes fetch each robots.txt once
// and ask each host no faster than its Crawl-delay between them. (The
// examples need a running Redis, so they are compiled, not run; the
// package's tests run the same code against real redis-server processes.)
func Example() {
	ctx := context.Background()
	opts, err := redisfleet.ParseURL(redisURL())
	if err != nil {
		fmt.Println(err)
		return
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	fleet, err := redisfleet.New(ctx, rdb, redisfleet.Config{Prefix: "mycrawl:"})
	if err != nil {
		fmt.Println(err) // redisfleet: New: PING: redisfleet: Redis is unavailable: ...
		return
	}
	defer fleet.Close()

	c := colly.NewCollector(colly.Async(true), colly.UserAgent("ExampleBot/1.0"),
		robots.WithRobots(
			robots.WithPolicy(policy.WithStore(fleet.Store())),
			robots.WithLimiter(fleet.Limiter(redisfleet.LimiterConfig{})),
		))
	c.Visit("https://example.com/")
	c.Wait()
}

// New fails at once when Redis does not answer; the options set the key
// prefix, the bound of every call, the leases and what to do while Redis
// is lost mid-crawl.
func ExampleNew() {
	opts, _ := redisfleet.ParseURL(redisURL())
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	fleet, err := redisfleet.New(context.Background(), rdb,
		redisfleet.Config{Prefix: "mycrawl:", CallTimeout: time.Second, Lease: 5 * time.Second, OnRedisDown: redisfleet.FallBackLocal})
	if err != nil {
		fmt.Println("no fleet:", err)
		return
	}
	defer fleet.Close()
	// fleet.Store(), fleet.Limiter(...) and fleetfrontier.New(fleet, ...) share its
	// keys, under "mycrawl:v2:".
}

// The Store is a policy.Store; with the resolver of package policy (or the
// plugin) it also makes one process fetch a robots.txt while the others
// wait for its result.
func ExampleFleet_Store() {
	c := colly.NewCollector(robots.WithRobots(robots.WithPolicy(policy.WithStore(fleet.Store()))))
	c.Visit("https://example.com/")
}

// A start-to-start limiter for the whole fleet, with 429/503 pauses capped
// at two minutes.
func ExampleFleet_Limiter() {
	l := fleet.Limiter(redisfleet.LimiterConfig{Spacing: hostlimit.StartToStart, MaxRetryAfter: 2 * time.Minute})
	p, err := l.Acquire(context.Background(), "https://example.com", 500*time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	// ... send the request, then:
	p.Sent()
	p.Release()
}

// ParseURL reads a redis:// URL into client options that let the fleet's
// call timeout cut a stalled call.
func ExampleParseURL() {
	o, err := redisfleet.ParseURL("redis://:secret@127.0.0.1:6380/2")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Addr, o.DB, o.ContextTimeoutEnabled)
	// Output: 127.0.0.1:6380 2 true
}

// A Redis that cannot be reached at start is a clear error.
func ExampleNew_unreachable() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer rdb.Close()
	_, err := redisfleet.New(context.Background(), rdb, redisfleet.Config{CallTimeout: 500 * time.Millisecond})
	fmt.Println(errors.Is(err, redisfleet.ErrUnavailable))
	// Output: true
}
