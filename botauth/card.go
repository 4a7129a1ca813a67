package botauth

import (
	"encoding/json"
	"fmt"
	"net/url"
)

// A Card is a crawler's Signature Agent Card
// (draft-meunier-webbotauth-registry-04): the JSON document that registries
// (AWS's agent registry, for one) and sites read to learn who a signing
// crawler is, what it fetches for and how to slow it down. Its JSON is
// OAuth client metadata plus one "web_bot_auth" object; every member is
// optional, and an empty field is left out. Serve it at URL as
// application/json, over HTTPS, answering 200 without a redirect.
type Card struct {
	URL      string   // client_id: the https URL the card itself is served at
	Name     string   // client_name: the crawler's name
	Homepage string   // client_uri: the page that describes the crawler
	Logo     string   // logo_uri
	Contacts []string // contacts: e-mail addresses or URLs of its operators

	// Directory is the jwks_uri: the crawler's key directory, the URL its
	// signers name as Signature-Agent.
	Directory string

	UserAgent    string   // expected-user-agent: the User-Agent it sends
	ProductToken string   // rfc9309-product-token: the token its robots.txt groups name
	ObeysRobots  bool     // rfc9309-compliance: it obeys robots.txt (RFC 9309)
	Trigger      string   // trigger: "crawler" (autonomous) or "fetcher" (a user asked)
	Purposes     []string // purpose: what it uses the content for, e.g. "search", "train-ai"

	// RateControl says how a site slows the crawler, as
	// "CrawlDelay in robots.txt; 429 + Retry-After".
	RateControl string
	// RateExpectation is its expected rate, as "avg=1rps;max=10rps" (the
	// draft has not settled the format).
	RateExpectation string
}

// cardJSON is a Card's JSON document.
type cardJSON struct {
	ClientID   string      `json:"client_id,omitempty"`
	ClientName string      `json:"client_name,omitempty"`
	ClientURI  string      `json:"client_uri,omitempty"`
	LogoURI    string      `json:"logo_uri,omitempty"`
	Contacts   []string    `json:"contacts,omitempty"`
	JWKSURI    string      `json:"jwks_uri,omitempty"`
	WebBotAuth *cardWBAuth `json:"web_bot_auth,omitempty"`
}

type cardWBAuth struct {
	UserAgent       string   `json:"expected-user-agent,omitempty"`
	ProductToken    string   `json:"rfc9309-product-token,omitempty"`
	Compliance      bool     `json:"rfc9309-compliance,omitempty"`
	Trigger         string   `json:"trigger,omitempty"`
	Purpose         []string `json:"purpose,omitempty"`
	RateControl     string   `json:"rate-control,omitempty"`
	RateExpectation string   `json:"rate-expectation,omitempty"`
}

// MarshalJSON is the card's JSON document. A URL, Homepage, Logo or
// Directory that is not an absolute https URL, or a Trigger other than
// "crawler" and "fetcher", is an error wrapping [ErrOption].
func (c Card) MarshalJSON() ([]byte, error) {
	for _, f := range []struct{ name, v string }{{"URL", c.URL}, {"Homepage", c.Homepage}, {"Logo", c.Logo}, {"Directory", c.Directory}} {
		if f.v == "" {
			continue
		}
		if u, err := url.Parse(f.v); err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("%w: Card.%s %s: want an absolute https URL", ErrOption, f.name, quoted(f.v))
		}
	}
	if c.Trigger != "" && c.Trigger != "crawler" && c.Trigger != "fetcher" {
		return nil, fmt.Errorf("%w: Card.Trigger %s: want \"crawler\" or \"fetcher\"", ErrOption, quoted(c.Trigger))
	}
	doc := cardJSON{ClientID: c.URL, ClientName: c.Name, ClientURI: c.Homepage, LogoURI: c.Logo,
		Contacts: c.Contacts, JWKSURI: c.Directory}
	w := cardWBAuth{UserAgent: c.UserAgent, ProductToken: c.ProductToken, Compliance: c.ObeysRobots,
		Trigger: c.Trigger, Purpose: c.Purposes, RateControl: c.RateControl, RateExpectation: c.RateExpectation}
	if w.UserAgent != "" || w.ProductToken != "" || w.Compliance || w.Trigger != "" || len(w.Purpose) > 0 ||
		w.RateControl != "" || w.RateExpectation != "" {
		doc.WebBotAuth = &w
	}
	return json.Marshal(doc)
}
