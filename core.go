package robots

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/policy"
)

// core is what the plugin's parts share: its configuration, log, limiter,
// statistics, robots.txt resolver and the transports behind the gate. The
// features (decide.go, handoff.go, transport.go, deferred.go,
// robotstags.go, usage.go, usagelog.go, sitemaps.go, frontiers.go,
// signing.go) work on it, never on [Plugin], which holds the core and the
// features.
type core struct {
	cfg   config
	log   *slog.Logger
	lim   Limiter
	stats stats
	res   resolverCell // resolve.go
	colls collectors   // the collectors attached (Plugin.Attach)

	base      atomic.Pointer[roundTripper] // the transport behind the gate
	signing   *botauth.Transport           // signs each request past the gate (WithSigner); nil: nothing signed
	uaChecked atomic.Bool                  // the User-Agent of a request was checked (checkUserAgent)
	logFailed atomic.Bool                  // the usage log's first write error was logged (usagelog.go)
}

// resolverCell holds the plugin's robots.txt resolver, made at the first
// request (resolver, resolve.go).
type resolverCell struct {
	atomic.Pointer[policy.Resolver]
	once   sync.Once
	tokens []string // the resolver's product tokens, set with it
}

// collectors are the collectors a plugin is attached to.
type collectors struct {
	mu       sync.Mutex                // guards attached and adoptions of a collector's transport
	attached map[*colly.Collector]bool // collectors whose callbacks are registered
	first    *colly.Collector          // the first: its User-Agent names the crawler
}

// roundTripper boxes a transport for an atomic.Pointer.
type roundTripper struct{ http.RoundTripper }

// sender is the transport a request goes through once its host's gate let
// it through: the signer when there is one, else the base transport.
func (p *core) sender() http.RoundTripper {
	if p.signing != nil {
		return p.signing
	}
	return p.base.Load().RoundTripper
}

// collectorContext is c's Context, or the background context.
func collectorContext(c *colly.Collector) context.Context {
	if c.Context != nil {
		return c.Context
	}
	return context.Background()
}

// responded reports whether a response callback has r's request and
// Context to work on.
func responded(r *colly.Response) bool {
	return r.Request != nil && r.Request.URL != nil && r.Ctx != nil
}
