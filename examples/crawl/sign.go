package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"

	"github.com/politecrawl/robots"
	"github.com/politecrawl/robots/botauth"
)

// signFlags are the command's signing flags.
type signFlags struct {
	key, agent, form, cover, card *string
}

func addSignFlags(fs *flag.FlagSet) *signFlags {
	return &signFlags{
		key:   fs.String("sign-key", "", "sign every request with the Ed25519 key in `FILE` (PEM or JWK); needs -signature-agent"),
		agent: fs.String("signature-agent", "", "the https `URL` of the crawler's key directory; needs -sign-key"),
		form: fs.String("signature-form", "cloudflare", "the Signature-Agent `FORM`: cloudflare (a String, covered bare; "+
			"what Cloudflare's verifiers accept) or dictionary (the working group's sig1=\"...\", covered with its key)"),
		cover: fs.String("cover", "", "components `C[,C...]` each signature covers beyond @authority and signature-agent: @method, @path, @query"),
		card:  fs.String("write-card", "", "write the crawler's Signature Agent Card to `FILE` (JSON) before crawling; needs -sign-key"),
	}
}

// signer is the signer the flags ask for, nil when -sign-key and
// -signature-agent are not given (the other signing flags then are an
// error).
func (f *signFlags) signer(set map[string]bool) (*botauth.Signer, error) {
	if *f.key == "" && *f.agent == "" {
		for _, name := range []string{"signature-form", "cover", "write-card"} {
			if set[name] {
				return nil, fmt.Errorf("-%s needs -sign-key and -signature-agent", name)
			}
		}
		return nil, nil
	}
	if *f.key == "" || *f.agent == "" {
		return nil, errors.New("-sign-key and -signature-agent go together")
	}
	var opts []botauth.Option
	switch *f.form {
	case "cloudflare":
	case "dictionary":
		opts = append(opts, botauth.WithForm(botauth.DictionaryForm))
	default:
		return nil, fmt.Errorf("-signature-form %q: want cloudflare or dictionary", *f.form)
	}
	if comps := list(*f.cover); len(comps) > 0 {
		opts = append(opts, botauth.Cover(comps...))
	}
	key, err := botauth.LoadKey(*f.key)
	if err != nil {
		return nil, fmt.Errorf("-sign-key: %w", err)
	}
	s, err := botauth.NewSigner(*f.agent, []botauth.Key{key}, opts...)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	return s, nil
}

// cardPath is where the card is served, beside the key directory, as
// examples/keydirectory serves it by default.
const cardPath = "/signature-agent-card.json"

// writeCard writes p's Signature Agent Card, for the crawler sending ua,
// to the -write-card file: client_id the card's URL on the directory's
// origin (cardPath), the rest from the plugin's settings.
func (f *signFlags) writeCard(p *robots.Plugin, ua string) error {
	if *f.card == "" {
		return nil
	}
	u, err := url.Parse(*f.agent)
	if err != nil {
		return fmt.Errorf("-write-card: %w", err)
	}
	card := p.AgentCard(botauth.Card{URL: u.Scheme + "://" + u.Host + cardPath, UserAgent: ua})
	card.Name = card.ProductToken
	b, err := json.MarshalIndent(card, "", "  ")
	if err != nil {
		return fmt.Errorf("-write-card: %w", err)
	}
	if err := os.WriteFile(*f.card, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("-write-card: %w", err)
	}
	return nil
}
