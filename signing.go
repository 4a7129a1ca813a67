package robots

import (
	"log/slog"
	"net/http"
	"slices"
	"sync"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
)

// The signing layers of WithSigner, in the order a request meets them:
//
//	Answering   (p.signing.Answering): a challenge answered once, above the gate
//	checkTransport / robotsTransport: the robots check and the host's gate
//	p.signing   (botauth.Transport): signed when it leaves
//	baseTransport: the base transport (WithTransport, or the collector's)
//
// Answering must sit above the gate: beneath it, the answer would wait for
// the host's permit that the challenged response still holds.

// baseTransport is the transport beneath the signer: the plugin's base as
// it is at each request (Attach and ensureTransport may adopt another).
type baseTransport struct{ p *core }

func (t baseTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.p.base.Load().RoundTripper.RoundTrip(req)
}

// challengeRound is the next transport of a page's Answering layer: the
// plugin's send, told on its first call (the request itself) to return a
// 429 carrying Accept-Signature rather than retry it, and on its second
// (the answer) to retry as usual. Answering calls it at most twice, one
// call after the other.
type challengeRound struct {
	send  func(req *http.Request, first bool) (*http.Response, error)
	calls int
}

func (r *challengeRound) RoundTrip(req *http.Request) (*http.Response, error) {
	r.calls++
	return r.send(req, r.calls == 1)
}

// identityWarning is the message of the warning about one signing identity
// declaring search and an AI purpose.
const identityWarning = "robots: one signing identity declares search and an AI purpose: " +
	"Cloudflare blocks, on some sites, crawlers that use content both for search and for AI training or AI input; " +
	"sign each purpose as its own identity (its own key and Signature-Agent), one plugin per identity"

// identities is what the plugins of this process declared per signing
// identity (Signature-Agent): the union of their purposes, and whether the
// mix was warned about.
var identities = struct {
	sync.Mutex
	m map[string]*identity
}{m: map[string]*identity{}}

type identity struct {
	purposes []dialect.Category
	warned   bool
}

// checkIdentity adds the purposes declared with WithUsage to those of
// the plugin's signing identity, and logs [identityWarning] once per
// identity when they hold search and train-ai or ai-input: a plugin that
// declares both, or two plugins that sign as one identity and declare one
// each.
func (p *core) checkIdentity() {
	if p.cfg.signer == nil || len(p.cfg.purposes) == 0 {
		return
	}
	agent := p.cfg.signer.Agent()
	identities.Lock()
	id := identities.m[agent]
	if id == nil {
		id = &identity{}
		identities.m[agent] = id
	}
	for _, c := range p.cfg.purposes {
		if !slices.Contains(id.purposes, c) {
			id.purposes = append(id.purposes, c)
		}
	}
	warn := !id.warned && slices.Contains(id.purposes, dialect.Search) &&
		(slices.Contains(id.purposes, dialect.TrainAI) || slices.Contains(id.purposes, dialect.AIInput))
	id.warned = id.warned || warn
	names := categoryNames(id.purposes)
	identities.Unlock()
	if warn {
		p.log.Warn(identityWarning, slog.String("signature_agent", agent), slog.Any("purposes", names))
	}
}

func categoryNames(cs []dialect.Category) []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.String()
	}
	return names
}

// AgentCard returns card completed from the plugin's settings, for
// publishing as the crawler's Signature Agent Card (see [botauth.Card];
// examples/keydirectory serves one): where card leaves them empty, the key
// directory (Directory) is [WithSigner]'s Signature-Agent, the product
// token the first the plugin matches robots.txt groups with ([WithAgents]'
// first, else the one [dialect.ProductToken] derives from card.UserAgent,
// which should be the crawler's User-Agent), the trigger "crawler", the purposes those
// of [WithUsage], and the rate control what the plugin honours:
// robots.txt's Crawl-delay, and 429 and 503 answers with Retry-After.
// ObeysRobots is set: the plugin obeys robots.txt.
func (p *core) AgentCard(card botauth.Card) botauth.Card {
	if card.Directory == "" && p.cfg.signer != nil {
		card.Directory = p.cfg.signer.Agent()
	}
	if card.ProductToken == "" {
		// The tokens the plugin would match robots.txt with under that
		// User-Agent; "Mozilla/5.0" derives none, when there is none.
		ua := card.UserAgent
		if ua == "" {
			ua = "Mozilla/5.0"
		}
		opts := []policy.Option{policy.WithUserAgent(ua), policy.WithLogger(nil)}
		if r, err := policy.NewResolver(append(opts, p.cfg.policy...)...); err == nil && len(r.Agents()) > 0 {
			card.ProductToken = r.Agents()[0]
		}
	}
	if card.Trigger == "" {
		card.Trigger = "crawler"
	}
	if len(card.Purposes) == 0 {
		card.Purposes = categoryNames(p.cfg.purposes)
	}
	if card.RateControl == "" {
		card.RateControl = "CrawlDelay in robots.txt; 429 and 503 + Retry-After"
	}
	card.ObeysRobots = true
	return card
}
