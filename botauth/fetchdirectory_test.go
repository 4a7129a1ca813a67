package botauth_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/politecrawl/robots/botauth"
)

// FetchDirectory gives the keys of a directory that checks, and refuses
// one whose body, signature or authority was changed, one served as plain
// JSON, an http URL, and (with the default client) a loopback address.
func TestFetchDirectory(t *testing.T) {
	k, other := exampleKey(), exampleKey2()
	var dir *botauth.Directory
	tamper := func(h http.Header, body []byte) (http.Header, []byte) { return h, body }
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		dir.ServeHTTP(rec, r)
		h, body := tamper(rec.Header(), rec.Body.Bytes())
		for name, v := range h {
			w.Header()[name] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	var err error
	dir, err = botauth.NewDirectory(srv.URL, []botauth.Key{k})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	keys, err := botauth.FetchDirectory(ctx, srv.Client(), srv.URL)
	want := k.CryptoSigner().Public().(ed25519.PublicKey)
	if err != nil || len(keys) != 1 || !want.Equal(keys[k.Thumbprint()]) {
		t.Fatalf("FetchDirectory = %v, %v; want %s's key", keys, err, k.Thumbprint())
	}

	// The same directory, but listing another key in its body.
	otherJWK := strings.TrimPrefix(strings.TrimSuffix(otherDirectoryBody(t, other), "]}"), `{"keys":[`)
	addKey := func(h http.Header, b []byte) (http.Header, []byte) {
		return h, bytes.Replace(b, []byte(`[`), []byte(`[`+otherJWK+`,`), 1)
	}
	cases := []struct {
		name string
		fn   func(http.Header, []byte) (http.Header, []byte)
		want string
	}{
		{"another key added", addKey, "no Content-Digest sha-256 of the body"},
		{"another key added, its digest too", func(h http.Header, b []byte) (http.Header, []byte) {
			h, b = addKey(h.Clone(), b)
			sum := sha256.Sum256(b)
			h.Set("Content-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":")
			return h, b
		}, "no listed key signed the directory"},
		{"signature changed", func(h http.Header, b []byte) (http.Header, []byte) {
			h = h.Clone()
			s := h.Get("Signature")
			i := strings.Index(s, ":") + 2
			c := "A"
			if s[i] == 'A' {
				c = "B"
			}
			h.Set("Signature", s[:i]+c+s[i+1:]) // its first byte
			return h, b
		}, "no listed key signed the directory"},
		{"plain JSON", func(h http.Header, b []byte) (http.Header, []byte) {
			h = h.Clone()
			h.Set("Content-Type", "application/json")
			return h, b
		}, "field Content-Type"},
		{"unsigned", func(h http.Header, b []byte) (http.Header, []byte) {
			h = h.Clone()
			h.Del("Signature")
			h.Del("Signature-Input")
			return h, b
		}, "no listed key signed the directory"},
	}
	for _, c := range cases {
		tamper = c.fn
		if keys, err := botauth.FetchDirectory(ctx, srv.Client(), srv.URL); err == nil || keys != nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: FetchDirectory = %v, %v; want an error saying %q", c.name, keys, err, c.want)
		}
	}
	tamper = func(h http.Header, body []byte) (http.Header, []byte) { return h, body }

	// A directory signed for another authority.
	dir, err = botauth.NewDirectory("https://bot.example/", []botauth.Key{k})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Host = "bot.example"
		dir.ServeHTTP(w, r)
	})
	if keys, err := botauth.FetchDirectory(ctx, srv.Client(), srv.URL); err == nil || !strings.Contains(err.Error(), "signed the directory for") {
		t.Errorf("another authority's directory: FetchDirectory = %v, %v; want refused", keys, err)
	}
	for _, u := range []string{strings.Replace(srv.URL, "https", "http", 1), "https://", "%"} {
		if _, err := botauth.FetchDirectory(ctx, srv.Client(), u); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q: want an https URL", u)) {
			t.Errorf("%q: error %v; want it refused", u, err)
		}
	}
	if _, err := botauth.FetchDirectory(ctx, nil, srv.URL); err == nil || !strings.Contains(err.Error(), "is not public") {
		t.Errorf("a loopback directory with the default client: error %v; want it refused", err)
	}
}

// otherDirectoryBody is the JWK Set body of a directory of k.
func otherDirectoryBody(t *testing.T, k botauth.Key) string {
	t.Helper()
	d, err := botauth.NewDirectory("https://other.example/", []botauth.Key{k})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", "https://other.example"+botauth.DirectoryPath, nil))
	return rec.Body.String()
}

// A log's or a request's keyid is looked up among the keys the crawler's
// directory vouches for. The directory here is on a loopback address with
// a test certificate, so FetchDirectory is given the client that trusts
// it; the default (nil) refuses such addresses.
func ExampleFetchDirectory() {
	agent, client, stop := exampleCrawler()
	defer stop()
	keys, err := botauth.FetchDirectory(context.Background(), client, agent)
	if err != nil {
		log.Fatal(err)
	}
	_, ok := keys[exampleKey().Thumbprint()]
	fmt.Println(len(keys), ok)
	// Output:
	// 1 true
}
