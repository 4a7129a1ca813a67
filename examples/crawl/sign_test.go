package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/testkit/botauthtest"
)

// keyFiles writes a new Ed25519 key as a PKCS#8 PEM file and as a private
// JWK file, serves its key directory over TLS, and returns the files'
// paths, the directory's URL (the Signature-Agent) and a site's verifier
// that trusts the directory's certificate.
func keyFiles(t *testing.T) (pemFile, jwkFile, directory string, v *botauth.Verifier) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pemFile, jwkFile = filepath.Join(dir, "bot-key.pem"), filepath.Join(dir, "bot-key.jwk")
	if err := os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	jwk, _ := json.Marshal(map[string]string{"kty": "OKP", "crv": "Ed25519", "d": b64(priv.Seed()), "x": b64(pub)})
	if err := os.WriteFile(jwkFile, jwk, 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := botauth.NewKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	directory = "https://" + srv.Listener.Addr().String() + botauth.DirectoryPath
	d, err := botauth.NewDirectory(directory, []botauth.Key{k})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = d
	srv.StartTLS()
	t.Cleanup(srv.Close)
	v, err = botauth.NewVerifier(botauth.VerifyClient(srv.Client()), botauth.VerifyWindow(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return pemFile, jwkFile, directory, v
}

// twoHosts serves a site on 127.0.0.1 whose start page links a page, a
// disallowed page and a page that redirects to a second host, localhost;
// both have a robots.txt. Every request is recorded in log.
func twoHosts(t *testing.T, log *botauthtest.SiteLog) (start string, b *url.URL) {
	t.Helper()
	bs := httptest.NewServer(log.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\nCrawl-delay: 0.1\n")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>landed</p>")
	})))
	t.Cleanup(bs.Close)
	b, _ = url.Parse(bs.URL)
	b.Host = "localhost:" + b.Port()
	as := httptest.NewServer(log.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow: /private\nCrawl-delay: 0.1\n")
		case "/moved":
			http.Redirect(w, r, b.String()+"/landing", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="/a">a</a> <a href="/moved">moved</a> <a href="/private/x">x</a>`)
		}
	})))
	t.Cleanup(as.Close)
	return as.URL + "/", b
}

// TestCrawlSigned is the end-to-end check of request signing: a crawl of
// two hosts (a cross-host redirect hop, both robots.txt, the pages) with
// -sign-key as a PEM file and again as a JWK file has every request
// verified by the site's botauth.Verifier (tag, keyid the key's thumbprint
// found in the directory the Signature-Agent names, created about now,
// expires after now within the minute, the request's own "@authority",
// the Signature-Agent covered, a fresh nonce); without -sign-key no
// request carries a signature.
func TestCrawlSigned(t *testing.T) {
	pemFile, jwkFile, directory, v := keyFiles(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"pem", []string{"-sign-key", pemFile, "-signature-agent", directory}},
		{"jwk", []string{"-sign-key", jwkFile, "-signature-agent", directory}},
		{"unsigned", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &botauthtest.SiteLog{V: v}
			start, b := twoHosts(t, log)
			a, _ := url.Parse(start)
			var out, errb bytes.Buffer
			args := append([]string{"-agent", "testbot", "-min-delay", "0", "-progress=false", "-allow", "localhost"}, tc.args...)
			if code := run(context.Background(), append(args, start), &out, &errb); code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), "fetched  200 "+b.String()+"/landing\n") {
				t.Errorf("the redirect was not followed:\n%s", out.String())
			}
			want := map[string]int{a.Host + "/robots.txt": 1, a.Host + "/": 1, a.Host + "/a": 1, a.Host + "/moved": 1,
				b.Host + "/robots.txt": 1, b.Host + "/landing": 1}
			for _, s := range log.Seen() {
				want[s.Host+s.Path]--
				switch {
				case tc.args == nil:
					if s.Signed || s.Res.Verdict != botauth.Unsigned {
						t.Errorf("%s%s: signed without -sign-key (%s)", s.Host, s.Path, s.Input)
					}
				case s.Res.Verdict != botauth.Verified:
					t.Errorf("%s%s: %v: %s", s.Host, s.Path, s.Res.Verdict, s.Res.Reason)
				case s.Res.Agent != directory || s.Res.Components[0] != `"@authority"`:
					t.Errorf("%s%s: %+v", s.Host, s.Path, s.Res)
				}
			}
			for k, n := range want {
				if n != 0 {
					t.Errorf("%s: %d requests fewer than expected", k, n)
				}
			}
		})
	}
}

// TestCrawlSignFlags: -sign-key and -signature-agent go together, and an
// unreadable key or an agent that is no https URL is a usage error.
func TestCrawlSignFlags(t *testing.T) {
	pemFile, _, directory, _ := keyFiles(t)
	bad := filepath.Join(t.TempDir(), "bad.pem")
	os.WriteFile(bad, []byte("not a key"), 0o600)
	for name, args := range map[string][]string{
		"key alone":   {"-sign-key", pemFile},
		"agent alone": {"-signature-agent", directory},
		"bad key":     {"-sign-key", bad, "-signature-agent", directory},
		"no key file": {"-sign-key", bad + ".none", "-signature-agent", directory},
		"http agent":  {"-sign-key", pemFile, "-signature-agent", "http://bot.example/dir"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append(args, "http://127.0.0.1:1/"), &out, &errb)
		if code != 2 || !strings.HasPrefix(errb.String(), "crawl: ") || out.Len() != 0 {
			t.Errorf("%s: exit %d stdout %q stderr %q", name, code, out.String(), errb.String())
		}
	}
}

// TestCrawlSignForms: with -sign-key and -signature-agent alone every
// request is signed in the form Cloudflare's verifiers accept (the
// Signature-Agent a String, covered bare, no covered component with a
// parameter); -signature-form dictionary covers the member with its key;
// -cover adds components, "@query" only where a URL has a query. Every
// request verifies.
func TestCrawlSignForms(t *testing.T) {
	pemFile, _, directory, v := keyFiles(t)
	for _, tc := range []struct {
		name  string
		args  []string
		comps string
	}{
		{"default", nil, `"@authority" "signature-agent"`},
		{"cloudflare", []string{"-signature-form", "cloudflare"}, `"@authority" "signature-agent"`},
		{"dictionary", []string{"-signature-form", "dictionary"}, `"@authority" "signature-agent";key="sig1"`},
		{"cover", []string{"-cover", "@method,@path,@query"}, `"@authority" "signature-agent" "@method" "@path"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &botauthtest.SiteLog{V: v}
			start, _ := twoHosts(t, log)
			var out, errb bytes.Buffer
			args := append([]string{"-agent", "testbot", "-min-delay", "0", "-progress=false", "-allow", "localhost",
				"-sign-key", pemFile, "-signature-agent", directory}, tc.args...)
			if code := run(context.Background(), append(args, start), &out, &errb); code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
			}
			seen := log.Seen()
			if len(seen) < 6 {
				t.Fatalf("%d requests", len(seen))
			}
			for _, s := range seen {
				if s.Res.Verdict != botauth.Verified {
					t.Errorf("%s%s: %v: %s", s.Host, s.Path, s.Res.Verdict, s.Res.Reason)
					continue
				}
				if got := strings.Join(s.Res.Components, " "); got != tc.comps {
					t.Errorf("%s%s covers %s, want %s", s.Host, s.Path, got, tc.comps)
				}
			}
		})
	}
}

// TestCrawlWriteCard: -write-card writes the Signature Agent Card of the
// crawl's settings.
func TestCrawlWriteCard(t *testing.T) {
	pemFile, _, directory, v := keyFiles(t)
	start, _ := twoHosts(t, &botauthtest.SiteLog{V: v})
	card := filepath.Join(t.TempDir(), "card.json")
	var out, errb bytes.Buffer
	args := []string{"-agent", "testbot", "-min-delay", "0", "-progress=false", "-max", "0", "-purpose", "search",
		"-sign-key", pemFile, "-signature-agent", directory, "-write-card", card, start}
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	b, err := os.ReadFile(card)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ClientID string `json:"client_id"`
		JWKSURI  string `json:"jwks_uri"`
		WBA      struct {
			UA         string   `json:"expected-user-agent"`
			Token      string   `json:"rfc9309-product-token"`
			Compliance bool     `json:"rfc9309-compliance"`
			Purpose    []string `json:"purpose"`
		} `json:"web_bot_auth"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.ClientID != strings.TrimSuffix(directory, botauth.DirectoryPath)+"/signature-agent-card.json" || got.JWKSURI != directory || got.WBA.Token != "testbot" ||
		!got.WBA.Compliance || strings.Join(got.WBA.Purpose, ",") != "search" || !strings.Contains(got.WBA.UA, "testbot/0.1") {
		t.Errorf("card:\n%s", b)
	}
}

// TestCrawlSignFormFlags: a form or a component the signer does not know,
// and a signing flag without -sign-key, are usage errors.
func TestCrawlSignFormFlags(t *testing.T) {
	pemFile, _, directory, _ := keyFiles(t)
	for name, args := range map[string][]string{
		"bad form":          {"-sign-key", pemFile, "-signature-agent", directory, "-signature-form", "legacy"},
		"bad component":     {"-sign-key", pemFile, "-signature-agent", directory, "-cover", "@status"},
		"form, no key":      {"-signature-form", "dictionary"},
		"cover, no key":     {"-cover", "@path"},
		"write-card no key": {"-write-card", filepath.Join(t.TempDir(), "c.json")},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append(args, "http://127.0.0.1:1/"), &out, &errb)
		if code != 2 || !strings.HasPrefix(errb.String(), "crawl: ") || out.Len() != 0 {
			t.Errorf("%s: exit %d stdout %q stderr %q", name, code, out.String(), errb.String())
		}
	}
}
