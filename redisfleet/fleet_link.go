package redisfleet

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/redisfleet/internal/link"
)

func init() {
	link.Register(func(f any) link.Fleet { return fleetLink{f.(*Fleet)} })
}

// fleetLink is a Fleet as package fleetfrontier sees it (internal/link):
// its connection, keys, wake-ups and incidents, the limiter's permits
// (permitDesk) and the Store's policy reads.
type fleetLink struct{ f *Fleet }

func (l fleetLink) Client() redis.UniversalClient { return l.f.rdb }
func (l fleetLink) Logger() *slog.Logger          { return l.f.log }
func (l fleetLink) Token() string                 { return l.f.token() }
func (l fleetLink) Part(host string) int          { return l.f.part(host) }
func (l fleetLink) Tag(p int) string              { return l.f.tag(p) }
func (l fleetLink) WakeChannel(p int) string      { return l.f.pkey(p, kindWake) }

func (l fleetLink) Settings() link.Settings {
	c := l.f.cfg
	return link.Settings{Partitions: c.partitions, CallTimeout: c.callTimeout, Lease: c.lease, IdleTTL: c.idleTTL,
		ProcID: l.f.procID, PubCmd: l.f.pubCmd}
}

func (l fleetLink) CallError(op string, err error) error   { return l.f.callError(op, err) }
func (l fleetLink) Outage(op string, err error)            { l.f.outage(op, err) }
func (l fleetLink) Recovered()                             { l.f.recovered() }
func (l fleetLink) IncidentLevel(now time.Time) slog.Level { return l.f.incidentLevel(now) }
func (l fleetLink) SetOutageLimit(d time.Duration)         { l.f.setOutageLimit(d) }

func (l fleetLink) OOMError(limit time.Duration, what string, kept func() int) error {
	return l.f.oomError(limit, what, kept)
}

func (l fleetLink) Listen(ctx context.Context, ps ...int) { l.f.listen(ctx, ps...) }

func (l fleetLink) Subscribe(ctx context.Context, p int, key string) (<-chan int64, func()) {
	return l.f.subscribe(ctx, p, key, "")
}

func (l fleetLink) Permits() link.Permits   { return &l.f.desk }
func (l fleetLink) Policies() link.Policies { return &l.f.pols }
func (l fleetLink) Carrier() link.Carrier   { return l }

// TakeCarried implements link.Carrier: the releases the desk holds back
// for the frontier's next pipeline, as calls of the limiter's script.
func (l fleetLink) TakeCarried() ([]link.Op, func([]*redis.Cmd)) {
	ops := l.f.desk.takeDeferred("")
	calls := make([]link.Op, len(ops))
	for i, op := range ops {
		calls[i] = link.Op{Part: op.p, Name: op.op, Keys: l.f.hostScriptKeys(op.host),
			Args: l.f.hostArgs(op.p, op.mode, op.op, op.tok, -1, op.extra...)}
	}
	return calls, func(cmds []*redis.Cmd) { l.f.hostOpsDone(ops, cmds) }
}

func (l fleetLink) Key(kind, id string) string        { return l.f.key(kind, id) }
func (l fleetLink) PartKey(p int, kind string) string { return l.f.pkey(p, kind) }
func (l fleetLink) PolicyKey(storeKey string) string  { return l.f.polKey(storeKey) }
func (l fleetLink) Prefix() string                    { return l.f.prefix }

func (l fleetLink) SetReadyFresh(d time.Duration) {
	l.f.desk.mu.Lock()
	l.f.desk.fresh = d
	l.f.desk.mu.Unlock()
}
