package botauth_test

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/politecrawl/robots/botauth"
)

// keyPEM is an example key, as `openssl genpkey -algorithm ed25519` writes
// one. Never use a key printed in documentation.
const keyPEM = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIAcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH
-----END PRIVATE KEY-----
`

// agent is the example crawler's Signature-Agent: the URL of its key
// directory.
const agent = "https://bot.example" + botauth.DirectoryPath

func exampleKey() botauth.Key {
	k, err := botauth.ParseKey([]byte(keyPEM))
	if err != nil {
		log.Fatal(err)
	}
	return k
}

// nonce hides the random nonce so that the output is stable.
var nonce = regexp.MustCompile(`nonce="[^"]*"`)

// A key file is read once at start; its thumbprint is the keyid of its
// signatures and its kid in the directory.
func ExampleLoadKey() {
	path := filepath.Join(os.TempDir(), "botauth-example-key.pem")
	if err := os.WriteFile(path, []byte(keyPEM), 0o600); err != nil {
		log.Fatal(err)
	}
	defer os.Remove(path)
	k, err := botauth.LoadKey(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(k.Thumbprint())
	// Output: --6IM5l0OosLj9yWskISYhUA3n_3CURQkmrYMSha_ck
}

// A private JWK may carry its validity, read into NotBefore and Expires.
func ExampleParseKey() {
	k, err := botauth.ParseKey([]byte(`{"kty":"OKP","crv":"Ed25519",
		"d":"BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc","x":"6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw",
		"nbf":1798761600,"exp":1830297600}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(k.Thumbprint(), k.NotBefore.UTC().Format(time.DateOnly), k.Expires.UTC().Format(time.DateOnly))
	// Output: --6IM5l0OosLj9yWskISYhUA3n_3CURQkmrYMSha_ck 2027-01-01 2028-01-01
}

// A signer that also binds each signature to the request's method and
// path.
func ExampleNewSigner() {
	s, err := botauth.NewSigner(agent, []botauth.Key{exampleKey()}, botauth.Cover("@method", "@path"))
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "https://shop.example/catalogue", nil)
	if err := s.Sign(req, time.Unix(1_800_000_000, 0)); err != nil {
		log.Fatal(err)
	}
	fmt.Println(nonce.ReplaceAllString(req.Header.Get("Signature-Input"), `nonce="..."`))
	// Output: sig1=("@authority" "signature-agent" "@method" "@path");created=1799999995;keyid="--6IM5l0OosLj9yWskISYhUA3n_3CURQkmrYMSha_ck";alg="ed25519";expires=1800000055;nonce="...";tag="web-bot-auth"
}

// Sign serves a caller that builds its requests itself; a redirect hop or
// a retry of such a request carries the same signature, so prefer a
// Transport.
func ExampleSigner_Sign() {
	s, err := botauth.NewSigner(agent, []botauth.Key{exampleKey()})
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "https://shop.example/", nil)
	if err := s.Sign(req, time.Unix(1_800_000_000, 0)); err != nil {
		log.Fatal(err)
	}
	fmt.Println("Signature-Agent:", req.Header.Get("Signature-Agent"))
	fmt.Println("Signature:", len(req.Header.Get("Signature")), "bytes")
	// Output:
	// Signature-Agent: "https://bot.example/.well-known/http-message-signatures-directory"
	// Signature: 95 bytes
}

// A Transport signs each request of an http.Client when it is sent, each
// redirect hop for its own host.
func ExampleNewTransport() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer site.Close()
	s, err := botauth.NewSigner(agent, []botauth.Key{exampleKey()})
	if err != nil {
		log.Fatal(err)
	}
	tr, err := botauth.NewTransport(http.DefaultTransport, s)
	if err != nil {
		log.Fatal(err)
	}
	logged := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := tr.RoundTrip(req)
		fmt.Println(req.URL.Path, "signed:", resp != nil && resp.Request.Header.Get("Signature") != "")
		return resp, err
	})
	resp, err := (&http.Client{Transport: logged}).Get(site.URL + "/old")
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	// Output:
	// /old signed: true
	// /new signed: true
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// A crawler that signs only when a site asks: the site's 403 names what
// to sign, and the request is sent again signed that way.
func ExampleTransport_Answering() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Signature") == "" {
			w.Header().Set("Accept-Signature", `sig1=("@authority" "signature-agent";key="sig1");created;expires;nonce;tag="web-bot-auth"`)
			w.WriteHeader(http.StatusForbidden)
			return
		}
		fmt.Println("asked for:", nonce.ReplaceAllString(r.Header.Get("Signature-Input"), `nonce="..."`))
	}))
	defer site.Close()
	s, err := botauth.NewSigner(agent, []botauth.Key{exampleKey()}, botauth.WithClock(func() time.Time { return time.Unix(1_800_000_000, 0) }))
	if err != nil {
		log.Fatal(err)
	}
	tr, err := botauth.NewTransport(nil, s, botauth.OnlyWhenChallenged())
	if err != nil {
		log.Fatal(err)
	}
	resp, err := (&http.Client{Transport: tr.Answering(tr)}).Get(site.URL)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)
	// Output:
	// asked for: sig1=("@authority" "signature-agent";key="sig1");created=1799999995;expires=1800000055;nonce="...";tag="web-bot-auth";keyid="--6IM5l0OosLj9yWskISYhUA3n_3CURQkmrYMSha_ck"
	// 200 OK
}

// The key directory, served at its well-known path.
func ExampleNewDirectory() {
	d, err := botauth.NewDirectory(agent, []botauth.Key{exampleKey()}, botauth.WithMaxAge(time.Hour),
		botauth.WithClock(func() time.Time { return time.Unix(1_800_000_000, 0) }))
	if err != nil {
		log.Fatal(err)
	}
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", agent, nil))
	fmt.Println(rec.Header().Get("Content-Type"))
	fmt.Println(rec.Header().Get("Cache-Control"))
	fmt.Println(rec.Header().Get("Signature-Input"))
	fmt.Println(rec.Body.String())
	// Output:
	// application/http-message-signatures-directory+json
	// max-age=3600
	// binding=("@authority";req "content-digest");created=1800000000;expires=1800003600;keyid="--6IM5l0OosLj9yWskISYhUA3n_3CURQkmrYMSha_ck";tag="http-message-signatures-directory"
	// {"keys":[{"kty":"OKP","crv":"Ed25519","kid":"--6IM5l0OosLj9yWskISYhUA3n_3CURQkmrYMSha_ck","x":"6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw","use":"sig"}]}
}

// The working group's Dictionary form, for verifiers that follow
// draft-ietf-webbotauth-httpsig-protocol; the default String form is the
// one Cloudflare's verifiers accept.
func ExampleWithForm() {
	for _, f := range []botauth.Form{botauth.StringForm, botauth.DictionaryForm} {
		s, err := botauth.NewSigner(agent, []botauth.Key{exampleKey()}, botauth.WithForm(f))
		if err != nil {
			log.Fatal(err)
		}
		req, _ := http.NewRequest("GET", "https://shop.example/", nil)
		if err := s.Sign(req, time.Unix(1_800_000_000, 0)); err != nil {
			log.Fatal(err)
		}
		in := req.Header.Get("Signature-Input")
		fmt.Printf("%s: %s %s\n", f, req.Header.Get("Signature-Agent"), in[:regexp.MustCompile(`\);`).FindStringIndex(in)[0]+1])
	}
	// Output:
	// string: "https://bot.example/.well-known/http-message-signatures-directory" sig1=("@authority" "signature-agent")
	// dictionary: sig1="https://bot.example/.well-known/http-message-signatures-directory" sig1=("@authority" "signature-agent";key="sig1")
}

// created is set a margin before the signing instant, for verifiers whose
// clock is behind; expires is the window after created.
func ExampleWithSkew() {
	s, err := botauth.NewSigner(agent, []botauth.Key{exampleKey()}, botauth.WithSkew(2*time.Second), botauth.WithWindow(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "https://shop.example/", nil)
	if err := s.Sign(req, time.Unix(1_800_000_000, 0)); err != nil {
		log.Fatal(err)
	}
	fmt.Println(regexp.MustCompile(`created=\d+|expires=\d+`).FindAllString(req.Header.Get("Signature-Input"), -1))
	// Output: [created=1799999998 expires=1800000028]
}

// A directory that lists two keys during a rotation and carries one
// signature, for verifiers that refuse two.
func ExampleOneSignature() {
	next := exampleKey2()
	next.NotBefore = time.Unix(1_800_000_000, 0).Add(time.Hour)
	d, err := botauth.NewDirectory(agent, []botauth.Key{exampleKey(), next}, botauth.OneSignature(),
		botauth.WithClock(func() time.Time { return time.Unix(1_800_000_000, 0) }))
	if err != nil {
		log.Fatal(err)
	}
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", agent, nil))
	fmt.Println(len(regexp.MustCompile(`"kid"`).FindAllString(rec.Body.String(), -1)), "keys listed,", len(rec.Header().Values("Signature")), "signature")
	fmt.Println(regexp.MustCompile(`keyid="[^"]*"`).FindString(rec.Header().Get("Signature-Input")))
	// Output:
	// 2 keys listed, 1 signature
	// keyid="--6IM5l0OosLj9yWskISYhUA3n_3CURQkmrYMSha_ck"
}

func exampleKey2() botauth.Key {
	_, priv, _ := ed25519.GenerateKey(nil)
	k, err := botauth.NewKey(priv)
	if err != nil {
		log.Fatal(err)
	}
	return k
}

// A Signature Agent Card, as registries read it. Serve it at its URL,
// beside the key directory (examples/keydirectory -card).
func ExampleCard() {
	card := botauth.Card{
		URL:          "https://bot.example/signature-agent-card.json",
		Name:         "ExampleBot",
		Homepage:     "https://bot.example/about",
		Contacts:     []string{"mailto:bots@bot.example"},
		Directory:    agent,
		ProductToken: "ExampleBot",
		ObeysRobots:  true,
		Trigger:      "crawler",
		Purposes:     []string{"search"},
	}
	b, err := json.MarshalIndent(card, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(b))
	// Output:
	// {
	//   "client_id": "https://bot.example/signature-agent-card.json",
	//   "client_name": "ExampleBot",
	//   "client_uri": "https://bot.example/about",
	//   "contacts": [
	//     "mailto:bots@bot.example"
	//   ],
	//   "jwks_uri": "https://bot.example/.well-known/http-message-signatures-directory",
	//   "web_bot_auth": {
	//     "rfc9309-product-token": "ExampleBot",
	//     "rfc9309-compliance": true,
	//     "trigger": "crawler",
	//     "purpose": [
	//       "search"
	//     ]
	//   }
	// }
}
