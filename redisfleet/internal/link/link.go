// Package link is the seam between package redisfleet's Fleet and
// package fleetfrontier, the fleet's queue built on it: what the frontier
// uses of a Fleet (its connection, keys, wake-ups and incident log), the
// limiter's side of the round trips the two share ([Permits], [Carrier])
// and the Store's side ([Policies]). The frontier holds no field of the
// Fleet; every call goes through these interfaces, which package
// redisfleet implements.
package link

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// Fleet is what the frontier uses of one process's redisfleet.Fleet.
type Fleet interface {
	// Client is the Fleet's Redis client.
	Client() redis.UniversalClient
	// Settings are the Fleet's settings, fixed at New.
	Settings() Settings
	// Logger is where warnings go.
	Logger() *slog.Logger
	// Token returns a token unique across the fleet.
	Token() string

	// Part returns the partition of a host.
	Part(host string) int
	// Tag returns the prefix of partition p's keys (one hash slot).
	Tag(p int) string
	// WakeChannel returns partition p's wake-up channel.
	WakeChannel(p int) string

	// CallError wraps an error of a Redis call: a reply error as it is,
	// anything else as redisfleet.ErrUnavailable.
	CallError(op string, err error) error
	// Outage records a call that could not reach Redis (one warning per
	// incident); Recovered, one that did.
	Outage(op string, err error)
	Recovered()
	// IncidentLevel records a trouble event at now and returns the level
	// to log it at: Warn when it starts an incident, else Info.
	IncidentLevel(now time.Time) slog.Level
	// OOMError returns an error once Redis has refused writes with OOM
	// for longer than limit (see redisfleet's package doc), else nil.
	OOMError(limit time.Duration, what string, kept func() int) error
	// SetOutageLimit records a frontier's outage limit: the limiter waits
	// through OOM replies as long as the largest.
	SetOutageLimit(d time.Duration)

	// Listen makes sure this process hears the wake-ups of partitions ps
	// (it subscribes the first time, waiting at most a call timeout).
	Listen(ctx context.Context, ps ...int)
	// Subscribe registers a local waiter for the wake-ups of key on
	// partition p (hints in µs); cancel removes it.
	Subscribe(ctx context.Context, p int, key string) (hints <-chan int64, cancel func())

	// Permits is the limiter's side of the frontier's pops and done
	// reports; Carrier, of its pipelines; Policies, the Store's.
	Permits() Permits
	Carrier() Carrier
	Policies() Policies
}

// Settings are a Fleet's settings, defaults filled in.
type Settings struct {
	Partitions  int
	CallTimeout time.Duration // bounds every call
	Lease       time.Duration // of a permit, a fetch lock, a frontier request
	IdleTTL     time.Duration // of a host's limiter state
	ProcID      string        // this process's id (its own wake-up channels)
	PubCmd      string        // PUBLISH, or SPUBLISH on a Cluster
}

// Grant is the limiter permit a frontier pop granted with the request it
// handed out.
type Grant struct {
	Host  string
	Part  int
	ID    string // the request's lease id: the permit's token
	Delay int64  // µs, the delay the grant was made under
	Fail  int64  // the host's 429/503 run at the grant
	Mode  int    // the spacing mode stored with the host
}

// Permits is the limiter's side of one process's frontier: it keeps the
// permits the frontier's pops granted until the limiter takes them, and
// holds back a host's releases while the frontier has a request of the
// host out, so that they ride that request's done report.
type Permits interface {
	// Granting reports whether a pop should grant the host's permit with
	// the request it hands out (the Fleet has a Limiter).
	Granting() bool
	// Handed records a request of host handed out to this process; ready:
	// its host was ready by its limiter state; g (nil: none) the permit
	// the pop granted with it.
	Handed(host string, ready bool, g *Grant)
	// GiveBack gives back now a permit a pop granted with a request that
	// could not be handed out.
	GiveBack(g Grant)
	// Done records that the request of host leased as id is done: its
	// permit, if the limiter never took it, is given back in the next
	// pipeline.
	Done(host, id string)
	// Postponed records that the request of host leased as id was handed
	// back unsent: the pop that ends its lease gives its permit back.
	Postponed(host, id string)
	// Dropped records that a request of host is no longer out here.
	Dropped(host string)
	// FlushHost sends now the releases of host held back for a done
	// report, and reports whether they were written.
	FlushHost(host string) bool
}

// Carrier is the one seam through which the frontier's pipelines carry the
// limiter's releases: a pipeline takes the releases held back for it,
// runs each inside the done report of its partition (or beside it, as a
// call of the limiter's script), and hands back their replies.
type Carrier interface {
	// TakeCarried removes and returns the releases held back for the next
	// pipeline, as calls of the limiter's script, and done, which takes
	// their replies (cmds[i] is ops[i]'s), to be called once they came.
	TakeCarried() (ops []Op, done func(cmds []*redis.Cmd))
}

// Op is a call of the limiter's script (lua.Limiter): its partition,
// KEYS and ARGV, and its operation's name (for errors).
type Op struct {
	Part int
	Name string
	Keys []string
	Args []any
}

// Policies is the Store's side of the frontier's pops: a pop that hands
// out a request also reads the stored robots.txt policy of its host, which
// answers the Store's next Get of it in this process.
type Policies interface {
	// Prefix returns the Store's key prefix of a host's policy and the
	// largest value a pop should read (0: none, the Store has seen no key
	// yet).
	Prefix() (prefix string, max int)
	// Keep keeps the value a pop read for the Store key ("": none stored).
	Keep(key, value string)
}

var of func(any) Fleet

// Register sets the function that Of calls: package redisfleet's, once,
// when it is initialised. It takes any because this package cannot name
// redisfleet.Fleet: redisfleet imports it.
func Register(fn func(any) Fleet) { of = fn }

// Of returns the seam of a *redisfleet.Fleet (package fleetfrontier
// imports redisfleet, so its init has run).
func Of(fleet any) Fleet { return of(fleet) }

// Testing is what the tests of package fleetfrontier read and set of a
// Fleet besides [Fleet]: its key schema (redisfleet's keys.go), to look at
// and delete the limiter's and the Store's keys, and how long a pop's
// finding that a host is ready stands in for the limiter's early wait, to
// take the machine's load out of the tests that count round trips. A
// Fleet's seam implements it.
type Testing interface {
	// Key returns the key of a kind (host, hold, wait, early, seen,
	// fetch) for id (a host, a store key).
	Key(kind, id string) string
	// PartKey returns partition p's key of a kind (epoch, pace, wake).
	PartKey(p int, kind string) string
	// PolicyKey returns the key of the policy stored under a store key.
	PolicyKey(storeKey string) string
	// Prefix is the prefix of every key of the Fleet.
	Prefix() string
	// SetReadyFresh sets how long a pop's finding stands in (and a
	// permit a pop granted waits for the limiter).
	SetReadyFresh(d time.Duration)
}
