package botauth

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/dunglas/httpsfv"
)

// Where and how a key directory is served.
const (
	// DirectoryPath is the well-known path of a key directory.
	DirectoryPath = "/.well-known/http-message-signatures-directory"
	// DirectoryMediaType is the media type of a key directory.
	DirectoryMediaType = "application/http-message-signatures-directory+json"
)

// directoryTag is the tag parameter of a directory response's signatures.
const directoryTag = "http-message-signatures-directory"

// A Directory is the http.Handler of a crawler's key directory at its URL
// (the crawler's Signature-Agent): at that URL's path it answers GET and
// HEAD with the JWK Set of its keys not yet expired (public members only,
// kid the thumbprint, nbf and exp from the key's bounds), as
// [DirectoryMediaType], with a Content-Digest, a Cache-Control max-age,
// and one signature per published key (labels binding, binding2, ...;
// one signature only with [OneSignature])
// over "@authority";req and content-digest, tagged
// "http-message-signatures-directory", as the Web Bot Auth draft
// recommends and verifiers such as Cloudflare's require at registration.
// It signs only for its own authority: a request naming another Host is
// answered 421 Misdirected Request, so that no one can have the crawler's
// keys bound to a domain of theirs. Other paths are 404, other methods
// 405. Serve it over HTTPS: verifiers fetch the directory only from an
// https URL.
type Directory struct {
	url       string
	scheme    string
	authority string // the authority the directory signs for
	path      string
	keys      []Key
	now       func() time.Time
	maxAge    time.Duration
	one       bool // sign with the newest key in force only
}

// NewDirectory returns the Directory of keys served at dirURL, an absolute
// https (or, behind a proxy that terminates TLS or in a test, http) URL:
// the Signature-Agent its signers name. Its path is where the directory
// answers; a URL without a path is served at [DirectoryPath]. Options:
// [WithClock], [WithMaxAge], [OneSignature], [AllowTestKey].
func NewDirectory(dirURL string, keys []Key, opts ...Option) (*Directory, error) {
	c, keys, err := newKeyConfig("NewDirectory", forDirectory, opts, keys)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(dirURL)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.User != nil || u.Fragment != "" || u.RawQuery != "" {
		return nil, fmt.Errorf("%w: NewDirectory: %q: want an absolute https URL without user, query or fragment", ErrOption, dirURL)
	}
	auth, err := authorityOf(u.Scheme, "", u)
	if err != nil {
		return nil, fmt.Errorf("%w: NewDirectory: %q: %w", ErrOption, dirURL, err)
	}
	path := u.Path
	if path == "" || path == "/" {
		path = DirectoryPath
	}
	return &Directory{url: dirURL, scheme: u.Scheme, authority: auth, path: path, keys: keys, now: c.now, maxAge: c.maxAge, one: c.newestOnly}, nil
}

// jwks is the directory's JWK Set at now and the keys it lists.
func (d *Directory) jwks(now time.Time) ([]byte, []Key, error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	set.Keys = []jwk{}
	var keys []Key
	for _, k := range d.keys {
		if !k.Expires.IsZero() && !now.Before(k.Expires) {
			continue
		}
		j := jwk{Kty: "OKP", Crv: "Ed25519", Kid: k.kid, X: k.x(), Use: "sig"}
		if !k.NotBefore.IsZero() {
			j.Nbf = k.NotBefore.Unix()
		}
		if !k.Expires.IsZero() {
			j.Exp = k.Expires.Unix()
		}
		set.Keys = append(set.Keys, j)
		keys = append(keys, k)
	}
	body, err := json.Marshal(set)
	return body, keys, err
}

// ServeHTTP answers a request for the directory (see [Directory]).
func (d *Directory) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a, err := authorityOf(d.scheme, r.Host, r.URL); err != nil || a != d.authority {
		http.Error(w, "misdirected request: this key directory is "+d.url, http.StatusMisdirectedRequest)
		return
	}
	if r.URL.Path != d.path {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h, body, err := d.response(d.now())
	if err != nil {
		http.Error(w, "key directory unavailable", http.StatusInternalServerError)
		return
	}
	for k, v := range h {
		w.Header()[k] = v
	}
	_, _ = w.Write(body)
}

// response is the header and body of the directory's answer at now.
func (d *Directory) response(now time.Time) (http.Header, []byte, error) {
	body, keys, err := d.jwks(now)
	if err != nil {
		return nil, nil, fmt.Errorf("botauth: directory: %w", err)
	}
	sum := sha256.Sum256(body)
	dd := httpsfv.NewDictionary()
	dd.Add("sha-256", httpsfv.NewItem(sum[:]))
	digest, err := httpsfv.Marshal(dd)
	if err != nil {
		return nil, nil, fmt.Errorf("botauth: directory: %w", err)
	}
	if d.one && len(keys) > 1 {
		if k, err := current(keys, now, ""); err == nil {
			keys = []Key{k}
		} else {
			keys = keys[:1]
		}
	}
	h := http.Header{}
	h.Set("Content-Type", DirectoryMediaType)
	h.Set("Content-Digest", digest)
	h.Set("Cache-Control", "max-age="+strconv.FormatInt(int64(d.maxAge/time.Second), 10))
	lines := []line{{component{name: "@authority", req: true}, d.authority}, {component{name: "content-digest"}, digest}}
	for i, k := range keys {
		params := httpsfv.NewParams()
		params.Add("created", now.Unix())
		params.Add("expires", now.Add(d.maxAge).Unix())
		params.Add("keyid", k.kid)
		params.Add("tag", directoryTag)
		label := "binding"
		if i > 0 {
			label += strconv.Itoa(i + 1)
		}
		_, input, sig, err := signLines(k.priv, label, lines, params)
		if err != nil {
			return nil, nil, err
		}
		h.Add("Signature-Input", input)
		h.Add("Signature", sig)
	}
	return h, body, nil
}
