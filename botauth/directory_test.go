package botauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestDirectoryServes: over TLS the directory passes the Verifier's checks
// (media type, Content-Digest, kid = thumbprint, no private member), both
// keys signing it; it says how long it may be cached, answers HEAD
// with the headers alone, and refuses other methods and paths.
func TestDirectoryServes(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	keys := []Key{seedKey(t, 30), seedKey(t, 31)}
	var d *Directory
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { d.ServeHTTP(w, r) }))
	defer srv.Close()
	d, err := NewDirectory(srv.URL+DirectoryPath, keys, WithMaxAge(time.Hour), WithClock(func() time.Time { return clock }))
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(VerifyClient(srv.Client()), VerifyClock(func() time.Time { return clock }))
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.directory(context.Background(), srv.URL+DirectoryPath)
	if err != nil || len(got) != 2 {
		t.Errorf("%d signed keys, want 2 (%v)", len(got), err)
	}
	do := func(method, path string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	head := do("HEAD", DirectoryPath)
	if head.StatusCode != 200 || head.Header.Get("Cache-Control") != "max-age=3600" ||
		head.Header.Get("Content-Digest") == "" || len(head.Header.Values("Signature")) != 2 {
		t.Errorf("HEAD: %d %v", head.StatusCode, head.Header)
	}
	if !strings.Contains(head.Header.Get("Signature-Input"), ";expires=1800003600;") {
		t.Errorf("signature lifetime: %s", head.Header.Get("Signature-Input"))
	}
	if r := do("POST", DirectoryPath); r.StatusCode != 405 || r.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %v", r.StatusCode, r.Header)
	}
	if r := do("GET", "/.well-known/other"); r.StatusCode != 404 {
		t.Errorf("other path: %d", r.StatusCode)
	}
}

// TestDirectoryOneSignature: with OneSignature a directory listing two
// keys carries one signature, by the key its signers sign with: the old
// one before the new one starts, the new one after.
func TestDirectoryOneSignature(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	old, next := seedKey(t, 32), seedKey(t, 33)
	next.NotBefore = start.Add(time.Hour)
	clock := start
	d, err := NewDirectory("https://bot.example"+DirectoryPath, []Key{old, next}, OneSignature(),
		WithClock(func() time.Time { return clock }))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []Key{old, next} {
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, httptest.NewRequest("GET", "https://bot.example"+DirectoryPath, nil))
		in := rec.Header().Values("Signature-Input")
		body := rec.Body.String()
		if len(in) != 1 || len(rec.Header().Values("Signature")) != 1 || !strings.Contains(in[0], `keyid="`+want.Thumbprint()+`"`) ||
			!strings.Contains(body, old.Thumbprint()) || !strings.Contains(body, next.Thumbprint()) {
			t.Errorf("at %v: Signature-Input %q, body %s; want one signature by %s", clock, in, body, want.Thumbprint())
		}
		clock = clock.Add(2 * time.Hour)
	}
}
