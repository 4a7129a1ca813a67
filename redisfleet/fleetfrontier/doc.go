// Package fleetfrontier is the URL queue of a fleet of crawler processes
// that share one Redis through package redisfleet: a Colly queue.Storage
// with one queue per host for the whole fleet, one seen set (each request
// queued once for the fleet), and a request handed out only when its host
// may be asked by the fleet's limiter, read in the same Lua script that
// pops. Each process makes a [Frontier] with [New] on its own
// redisfleet.Fleet; every process's queue.Run ends when the fleet's queue
// is empty and no process works.
//
//	fleet, err := redisfleet.New(ctx, redis.NewClient(rdbOpts), redisfleet.Config{})
//	if err != nil { ... }
//	defer fleet.Close()
//	c := colly.NewCollector(robots.WithRobots(
//		robots.WithPolicy(policy.WithStore(fleet.Store())),
//		robots.WithLimiter(fleet.Limiter(redisfleet.LimiterConfig{})),
//	))
//	front := fleetfrontier.New(fleet, fleetfrontier.Config{Name: "mycrawl"})
//	defer front.Close()
//	robots.AttachFrontier(c, front)
//	q, _ := queue.New(4, front)
//	q.AddURL("https://example.com/") // every process may add the start URLs: the first wins
//	err = q.Run(c)
//
// The frontier shares its round trips with the Fleet's limiter and Store:
// a pop that hands out a request also grants its host's permit and reads
// its stored robots.txt policy, and a done report carries the limiter's
// releases of its host (redisfleet's package doc, "Round trips per
// request"). Its keys live in the Fleet's partitions, beside the limiter
// state of their hosts; what it does when Redis is slow, lost, restarted
// empty or evicting is on [Frontier], and in redisfleet's package doc,
// "Failure behaviour".
package fleetfrontier
