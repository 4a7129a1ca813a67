package fleetfrontier

import (
	"cmp"
	"time"

	"github.com/politecrawl/robots/frontier"
)

// Config configures a [Frontier]. The zero Config is the
// default: every field's zero value (or a value below zero) means its
// default.
type Config struct {
	// Name names the frontier (default "default"): processes that crawl
	// together use the same name; a new crawl on the same Redis uses a
	// new one (the frontier's seen set lasts, so that a URL is fetched
	// once across restarts too).
	Name string

	// PerHost is how many requests of one host may be out (handed out,
	// not done) fleet-wide at a time (default 1).
	PerHost int

	// MaxWait bounds how long GetRequest waits for a ready host (default
	// 1 s); see [Frontier.GetRequest].
	MaxWait time.Duration

	// Hold is how long a request this process handed out may stay not
	// done before it counts as done, with a warning (default 2 minutes).
	// It only matters for requests Colly drops without OnError or
	// OnScraped (see package frontier).
	Hold time.Duration

	// OutageLimit is how long QueueSize keeps retrying while Redis cannot
	// be reached before it returns the error, which ends Colly's
	// queue.Run with it (default 1 minute). It also bounds how long Redis
	// may keep losing the frontier's keys (each recovery within a lease
	// of the previous one: an evicting Redis whose maxmemory cannot hold
	// the queue, see redisfleet.Config.Eviction) before QueueSize returns an error
	// saying so, with the requests this process knows not crawled.
	OutageLimit time.Duration

	// NoJournal turns the journal off. On (the default), the process
	// keeps in memory the requests it queued until they are done in the
	// fleet (bounded by JournalCap), so that it can queue them again if
	// Redis loses its data; off, a Redis restarted empty loses the queue.
	// A request whose write failed on the client (Redis unreachable, or
	// its reply lost) and that Redis then finds seen is journaled too: the
	// failed write may have queued it.
	NoJournal bool

	// JournalCap bounds the journal (default 100,000 requests). The
	// journal keeps a request until it is done anywhere in the fleet: the
	// process drops its own requests when it reports them done, and,
	// every third of the lease, up to 8,192 of those other processes
	// reported done (a fleet-wide done set in Redis). A request queued
	// while the journal is full is not journaled: it is counted
	// (Stats.NotJournaled) and a warning is logged when the
	// journal fills; a Redis restarted empty loses such a request.
	JournalCap int

	// TTL is how long the frontier's keys in Redis (queues, seen and done
	// sets, leases, counters) outlive the crawl's last activity (default
	// 7 days; at least a minute). Every process refreshes the TTL while it
	// runs (when it queues requests, and at most once a minute from its
	// lease renewal), so the keys of a crawl expire that long after its
	// last process stopped; a URL queued again within that time is still
	// refused as seen. [Frontier.Drop] deletes them at once.
	TTL time.Duration

	// Batching, above zero, turns batching on (default off): the frontier
	// trades the exactness of two answers for fewer Redis round trips,
	// for a crawl where each page queues several links.
	//
	//   - AddRequest keeps the request in memory and returns nil (never
	//     frontier.ErrSeen: a request seen before is dropped when written,
	//     and counted in Stats.Seen). The kept requests are
	//     written together, in one pipeline with the next done report (so
	//     a page's links go out with its done report, links first, then
	//     the limiter's releases kept for it) or the next pop, at the
	//     latest Batching after the first of them was kept, when 256 are
	//     kept, by a GetRequest while this process has no request out,
	//     and by Close.
	//   - Done sends nothing at once: the done report waits for this
	//     process's next pop (a GetRequest's look at a partition) and goes
	//     first in its pipeline, so that both cost one round trip and the
	//     host the report frees may be handed out by that very pop. It
	//     waits at most min(Batching, 5 ms), then goes alone; QueueSize
	//     writes it before it asks Redis, and so does Close. The host's
	//     next grant may come that much later (the permit's release kept
	//     for the report goes with it: a later release only lengthens the
	//     gap).
	//   - QueueSize answers from what this process knows, without asking
	//     Redis, while that is more than zero (requests it has out or
	//     keeps): Colly's queue only needs to know whether the frontier is
	//     empty. It asks Redis (and writes what is kept) when this process
	//     knows of nothing, or after a GetRequest that handed out nothing.
	//
	// A process that dies with links kept loses nothing: the page they
	// were found on was not reported done (its done report goes out after
	// them), so its lease ends, another process fetches the page again
	// and finds them again.
	Batching time.Duration
}

// frontierConfig is a Config with its defaults filled in.
type frontierConfig struct {
	name        string
	perHost     int
	maxWait     time.Duration
	hold        time.Duration
	outageLimit time.Duration
	journal     bool
	journalCap  int
	ttl         time.Duration
	batch       time.Duration // Batching: 0 off
	linger      time.Duration // Batching: how long a done report waits for a pop (min(batch, frontierDoneLinger); tests change it)
}

// positive returns v if it is above zero, else def.
func positive[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// resolve returns the settings c gives, defaults filled in.
func (c Config) resolve() frontierConfig {
	cfg := frontierConfig{
		name:        cmp.Or(c.Name, DefaultName),
		perHost:     positive(c.PerHost, 1),
		maxWait:     positive(c.MaxWait, frontier.DefaultMaxWait),
		hold:        positive(c.Hold, frontier.DefaultHold),
		outageLimit: positive(c.OutageLimit, DefaultOutageLimit),
		journal:     !c.NoJournal,
		journalCap:  positive(c.JournalCap, DefaultJournalCap),
		ttl:         max(positive(c.TTL, DefaultTTL), time.Minute),
		batch:       max(c.Batching, 0),
	}
	cfg.linger = min(cfg.batch, frontierDoneLinger)
	return cfg
}
