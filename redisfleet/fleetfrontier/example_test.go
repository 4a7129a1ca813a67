package fleetfrontier_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/frontier"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/redisfleet"
	"github.com/politecrawl/robots/redisfleet/fleetfrontier"
)

// fleet is the handle the examples below use, made once per process by
// redisfleet.New (see redisfleet's Example).
var fleet *redisfleet.Fleet

// Every process of the fleet runs a Colly queue on the fleet's frontier:
// one queue per host shared by all, each URL fetched once, and each
// process's Run ends when the shared queue is empty and no process works.
// (Compiled, not run: it needs a Redis; examples/distributed is the whole
// program and redisfleet's tests run it as three processes.)
func ExampleNew() {
	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"), robots.WithRobots(
		robots.WithPolicy(policy.WithStore(fleet.Store())),
		robots.WithLimiter(fleet.Limiter(redisfleet.LimiterConfig{})),
	))
	front := fleetfrontier.New(fleet, fleetfrontier.Config{Name: "mycrawl"})
	defer front.Close()
	robots.AttachFrontier(c, front) // reports each request done; Colly's own revisit check off
	q, _ := queue.New(4, front)
	for _, u := range []string{"https://example.com/", "https://example.org/"} {
		// Every process queues the start URLs: the first wins.
		if err := q.AddURL(u); err != nil && !errors.Is(err, frontier.ErrSeen) {
			fmt.Println(err)
		}
	}
	if err := q.Run(c); err != nil {
		fmt.Println("stopped:", err) // Redis unreachable past the outage limit
	}
}

// The frontier's keys expire a week (Config.TTL) after the crawl's
// last activity; once every process's queue.Run has returned, one process
// may delete them at once. The journal that lets a process queue again
// what Redis lost is capped (Config.JournalCap). (Compiled, not run: it needs
// a Redis.)
func ExampleFrontier_Drop() {
	ctx := context.Background()
	front := fleetfrontier.New(fleet, fleetfrontier.Config{Name: "crawl-42", TTL: 24 * time.Hour, JournalCap: 50_000})
	defer front.Close()
	// ... every process runs its Colly queue on front until it returns ...
	if err := front.Drop(ctx); err != nil {
		fmt.Println("keys left to their TTL:", err)
	}
	st := front.Stats()
	fmt.Println(st.Journal, st.Pruned, st.NotJournaled)
}
