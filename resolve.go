package robots

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/internal/gatewait"
	"github.com/politecrawl/robots/policy"
)

// resolver returns the plugin's resolver, created on first use so that the
// User-Agent of the collector it was first attached to (set by later
// options or COLLY_USER_AGENT) is known. The crawler's name is fixed then,
// once: never from a request's header (extensions.RandomUserAgent changes
// those), and a User-Agent set on the collector later does not change it.
func (p *core) resolver() *policy.Resolver {
	if r := p.res.Load(); r != nil {
		return r
	}
	p.res.once.Do(func() {
		p.colls.mu.Lock()
		var userAgent string
		if p.colls.first != nil {
			userAgent = p.colls.first.UserAgent
		}
		p.colls.mu.Unlock()
		// The plugin's defaults first: the user's policy options override them.
		opts := []policy.Option{
			policy.WithUserAgent(userAgent),
			policy.WithHTTPClient(&http.Client{Transport: p.robotsFetches()}),
			policy.WithLogger(p.log),
			policy.WithDocumentFilter(p.mayVisit),
		}
		r, err := policy.NewResolver(append(opts, p.cfg.policy...)...)
		if err != nil {
			// New checked the user's options: not reached. Never a panic
			// if it is: the plugin's own defaults alone.
			p.log.Error("robots: WithPolicy: the resolver's options are invalid; using the plugin's defaults alone",
				slog.Any("error", err))
			r, _ = policy.NewResolver(opts...)
		}
		if len(r.Agents()) == 0 {
			p.log.Warn("robots: no product token could be derived from the User-Agent; only the * groups of robots.txt apply (set robots.WithAgents)",
				slog.String("user_agent", r.UserAgent()))
		}
		p.res.tokens = r.Agents()
		p.res.Store(r)
	})
	return p.res.Load()
}

// agents returns the resolver's product tokens (not to be modified).
func (p *core) agents() []string {
	p.resolver()
	return p.res.tokens
}

// robotsFetches is the transport of the resolver's robots.txt fetches:
// gate and base, with challenges answered above the gate when signing.
func (p *core) robotsFetches() http.RoundTripper {
	rt := &robotsTransport{p: p}
	if p.signing == nil {
		return rt
	}
	return p.signing.Answering(rt)
}

// robotsTransport is the transport of the plugin's robots.txt fetches: the
// host's gate (with the delay of the policy in memory), with the fetch's
// timeout stopped while it waits there, then the base transport.
type robotsTransport struct{ p *core }

func (t *robotsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := t.p
	base := p.sender()
	var buf [128]byte
	key, err := policy.AppendAuthority(buf[:0], req.URL)
	if err != nil {
		return base.RoundTrip(req)
	}
	host := string(key)
	hook := gatewait.From(req.Context())
	if hook != nil {
		hook.Pause()
	}
	err = p.takeToken(req.Context())
	var permit hostlimit.Permit
	if err == nil {
		permit, err = p.lim.AcquireMax(req.Context(), host, p.cachedDelay(host), -1)
	}
	if hook != nil {
		hook.Resume()
	}
	if err != nil {
		closeBody(req)
		return nil, fmt.Errorf("robots: gave up waiting for the host's turn: %w", err)
	}
	return hostlimit.RoundTrip(base, req, permit)
}
