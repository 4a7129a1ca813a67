package botauth

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dunglas/httpsfv"
)

// Bounds on fetching and caching key directories.
const (
	maxDirectory    = 64 << 10 // bytes of a key directory
	maxDirKeys      = 64
	maxDirs         = 1024 // directories cached
	fetchTimeout    = 10 * time.Second
	minDirLifetime  = time.Minute
	maxDirLifetime  = 24 * time.Hour
	defDirLifetime  = time.Hour
	failureLifetime = time.Minute
)

// A dirKey is a key of a directory, with its nbf and exp (0 when absent).
type dirKey struct {
	pub      ed25519.PublicKey
	nbf, exp int64
}

// inForce reports whether k may have signed at now, give or take skew.
func (k dirKey) inForce(now time.Time, skew time.Duration) bool {
	s := int64(skew / time.Second)
	return (k.nbf == 0 || now.Unix()+s >= k.nbf) && (k.exp == 0 || now.Unix()-s < k.exp)
}

// A dirEntry is a cached directory: its keys (nil when never fetched)
// fresh until fresh; after a failed fetch, err, and no fetch before retry.
type dirEntry struct {
	keys  map[string]dirKey
	fresh time.Time
	retry time.Time
	err   error
}

type dirCache struct {
	mu sync.Mutex
	m  map[string]*dirEntry
}

func (c *dirCache) get(u string) *dirEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[u]
}

func (c *dirCache) put(u string, e *dirEntry, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]*dirEntry)
	}
	if _, ok := c.m[u]; !ok && len(c.m) >= maxDirs {
		victim := ""
		for k, old := range c.m {
			victim = k
			if now.After(old.fresh) {
				break // prefer one that is stale
			}
		}
		delete(c.m, victim)
	}
	c.m[u] = e
}

// usable is the keys of e at now, or the error that stands in for them.
func (e *dirEntry) usable(now time.Time) (map[string]dirKey, bool, error) {
	switch {
	case e == nil:
		return nil, false, nil
	case now.Before(e.fresh):
		return e.keys, true, nil
	case now.Before(e.retry) && e.keys != nil:
		return e.keys, true, nil
	case now.Before(e.retry):
		return nil, true, e.err
	}
	return nil, false, nil
}

// directory returns the keys of the directory at u, from the cache or
// fetched (one fetch at a time per directory).
func (v *Verifier) directory(ctx context.Context, u string) (map[string]dirKey, error) {
	if keys, ok, err := v.dirs.get(u).usable(v.now()); ok {
		return keys, err
	}
	ch := v.flight.DoChan(u, func() (any, error) {
		now := v.now()
		old := v.dirs.get(u)
		if keys, ok, err := old.usable(now); ok {
			return keys, err // fetched while this call waited
		}
		keys, life, err := v.fetch(u, now)
		if err != nil {
			e := &dirEntry{retry: now.Add(failureLifetime), err: err}
			if old != nil {
				e.keys = old.keys
			}
			v.dirs.put(u, e, now)
			return e.keys, err
		}
		v.dirs.put(u, &dirEntry{keys: keys, fresh: now.Add(life)}, now)
		return keys, nil
	})
	select {
	case res := <-ch:
		keys, _ := res.Val.(map[string]dirKey)
		if keys != nil {
			return keys, nil // stale keys serve while the directory fails
		}
		return nil, res.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fetch reads the key directory at u (an https URL), checks it, and
// returns its keys that signed it, and how long it may be cached.
func (v *Verifier) fetch(u string, now time.Time) (map[string]dirKey, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	return fetchDirectory(ctx, v.client, u, now, v.skew)
}

// FetchDirectory fetches the key directory at dirURL (an https URL; one
// without a path means [DirectoryPath]), checks it as a [Verifier] does
// (its media type, its Content-Digest, a signature by a key it lists for
// its own authority, in force now) and returns the keys that signed it, by
// keyid (their JWK thumbprint): the keys a crawler vouches for. A
// directory that fails a check is an error, whatever keys it lists.
//
// client nil means one that connects only to public addresses; with
// either, no redirect is followed: a directory is read where it is named.
// The fetch ends with ctx or after 10 seconds.
func FetchDirectory(ctx context.Context, client *http.Client, dirURL string) (map[string]ed25519.PublicKey, error) {
	u, err := url.Parse(dirURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("botauth: key directory %s: want an https URL", clip(dirURL))
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = DirectoryPath
	}
	client = directoryClient(client)
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	keys, _, err := fetchDirectory(ctx, client, u.String(), time.Now(), defaultVerifySkew)
	if err != nil {
		return nil, fmt.Errorf("botauth: key directory %s: %w", u, err)
	}
	out := make(map[string]ed25519.PublicKey, len(keys))
	for kid, k := range keys {
		out[kid] = k.pub
	}
	return out, nil
}

// fetchDirectory reads the key directory at u with client, checks it at
// now, and returns its keys that signed it, and how long it may be cached.
func fetchDirectory(ctx context.Context, client *http.Client, u string, now time.Time, skew time.Duration) (map[string]dirKey, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", DirectoryMediaType)
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != DirectoryMediaType {
		return nil, 0, fmt.Errorf("field Content-Type %s, want %s", clip(resp.Header.Get("Content-Type")), DirectoryMediaType)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDirectory+1))
	if err != nil {
		return nil, 0, err
	}
	if len(body) > maxDirectory {
		return nil, 0, fmt.Errorf("over %d bytes", maxDirectory)
	}
	auth, err := authorityOf("https", req.URL.Host, req.URL)
	if err != nil {
		return nil, 0, err
	}
	keys, err := readDirectory(resp.Header, body, auth, now, skew)
	if err != nil {
		return nil, 0, err
	}
	return keys, lifetime(resp.Header.Values("Cache-Control")), nil
}

// readDirectory checks a directory response served at authority auth and
// returns the keys that signed it, by thumbprint.
func readDirectory(h http.Header, body []byte, auth string, now time.Time, skew time.Duration) (map[string]dirKey, error) {
	sum := sha256.Sum256(body)
	digests := h.Values("Content-Digest")
	cd, err := httpsfv.UnmarshalDictionary(digests)
	if err != nil {
		return nil, fmt.Errorf("field Content-Digest: %w", err)
	}
	m, _ := cd.Get("sha-256")
	it, _ := m.(httpsfv.Item)
	if d, _ := it.Value.([]byte); !bytes.Equal(d, sum[:]) {
		return nil, errors.New("no Content-Digest sha-256 of the body")
	}
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("JWK Set: %w", err)
	}
	if len(set.Keys) > maxDirKeys {
		return nil, fmt.Errorf("over %d keys", maxDirKeys)
	}
	listed := make(map[string]dirKey, len(set.Keys))
	for _, j := range set.Keys {
		pub, err := base64.RawURLEncoding.DecodeString(j.X)
		if j.Kty != "OKP" || j.Crv != "Ed25519" || j.D != "" || err != nil || len(pub) != ed25519.PublicKeySize {
			continue // not an Ed25519 public key
		}
		tp := thumbprint(pub)
		if j.Kid != "" && j.Kid != tp {
			continue
		}
		listed[tp] = dirKey{pub: pub, nbf: j.Nbf, exp: j.Exp}
	}
	inputs, err := httpsfv.UnmarshalDictionary(h.Values("Signature-Input"))
	if err != nil {
		return nil, fmt.Errorf("field Signature-Input: %w", err)
	}
	sigs, err := httpsfv.UnmarshalDictionary(h.Values("Signature"))
	if err != nil {
		return nil, fmt.Errorf("field Signature: %w", err)
	}
	digest := strings.Join(trimAll(digests), ", ")
	signed := make(map[string]dirKey, len(listed))
	for _, label := range inputs.Names() {
		m, _ := inputs.Get(label)
		il, ok := m.(httpsfv.InnerList)
		if !ok {
			continue
		}
		kid, _ := paramOf(il.Params, "keyid").(string)
		k, ok := listed[kid]
		if !ok || !directorySigParams(il.Params, now, skew) {
			continue
		}
		base, ok := directoryBase(il, auth, digest)
		sm, _ := sigs.Get(label)
		si, _ := sm.(httpsfv.Item)
		sig, _ := si.Value.([]byte)
		if ok && ed25519.Verify(k.pub, []byte(base), sig) {
			signed[kid] = k
		}
	}
	if len(signed) == 0 {
		return nil, fmt.Errorf("no listed key signed the directory for %s", auth)
	}
	return signed, nil
}

// directorySigParams reports whether a directory signature's parameters
// are acceptable at now: the directory tag, alg ed25519 if given, created
// not in the future, expires not past.
func directorySigParams(p *httpsfv.Params, now time.Time, skew time.Duration) bool {
	tag, _ := paramOf(p, "tag").(string)
	created, ok1 := paramOf(p, "created").(int64)
	expires, ok2 := paramOf(p, "expires").(int64)
	alg, hasAlg := paramOf(p, "alg").(string)
	s := int64(skew / time.Second)
	return tag == directoryTag && ok1 && ok2 && (!hasAlg || alg == "ed25519") &&
		created <= now.Unix()+s && expires >= now.Unix()-s
}

// directoryBase is the signature base of a directory signature that
// covers exactly "@authority";req and content-digest.
func directoryBase(il httpsfv.InnerList, auth, digest string) (string, bool) {
	if len(il.Items) != 2 {
		return "", false
	}
	var b strings.Builder
	var sawAuth, sawDigest bool
	for _, it := range il.Items {
		id, err := httpsfv.Marshal(it)
		if err != nil {
			return "", false
		}
		switch id {
		case `"@authority";req`:
			sawAuth = true
			b.WriteString(id + ": " + auth + "\n")
		case `"content-digest"`:
			sawDigest = true
			b.WriteString(id + ": " + digest + "\n")
		default:
			return "", false
		}
	}
	p, err := httpsfv.Marshal(il)
	if err != nil || !sawAuth || !sawDigest {
		return "", false
	}
	b.WriteString(`"@signature-params": ` + p)
	return b.String(), true
}

func trimAll(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = strings.Trim(v, " \t")
	}
	return out
}

// lifetime is how long a directory with Cache-Control cc may be cached.
func lifetime(cc []string) time.Duration {
	d := defDirLifetime
	for _, field := range cc {
		for _, dir := range strings.Split(field, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(dir), "=")
			switch strings.ToLower(name) {
			case "max-age":
				n, err := strconv.ParseInt(strings.Trim(val, `"`), 10, 64)
				if err != nil || n < 0 {
					n = 0
				}
				d = time.Duration(min(n, int64(maxDirLifetime/time.Second))) * time.Second
			case "no-store", "no-cache":
				d = 0
			}
		}
	}
	return min(max(d, minDirLifetime), maxDirLifetime)
}

// noRedirect refuses redirects: a key directory is read where it is named.
func noRedirect(*http.Request, []*http.Request) error {
	return errors.New("key directory: redirect not followed")
}

// directoryClient is a copy of c that follows no redirect, or for nil
// [publicClient].
func directoryClient(c *http.Client) *http.Client {
	if c == nil {
		return publicClient()
	}
	cc := *c
	cc.CheckRedirect = noRedirect
	return &cc
}

// publicClient is the default client for key directories: it connects
// only to public addresses and follows no redirect. There is one per
// process, so that [FetchDirectory] and the verifiers reuse its idle
// connections (closed after 90 s idle) rather than each leaving a
// transport's open.
var publicClient = sync.OnceValue(func() *http.Client {
	d := &net.Dialer{Timeout: fetchTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() ||
			ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
			return fmt.Errorf("key directory: address %s is not public", host)
		}
		return nil
	}}
	return &http.Client{
		Transport: &http.Transport{DialContext: d.DialContext, TLSHandshakeTimeout: fetchTimeout,
			ResponseHeaderTimeout: fetchTimeout, MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second},
		CheckRedirect: noRedirect,
	}
})
