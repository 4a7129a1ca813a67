package botauth

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
)

// The RFC 9421 Appendix B.1.4 Ed25519 test key, as PEM and as a private JWK.
const (
	testKeyPEM = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
-----END PRIVATE KEY-----
`
	testKeyJWK = `{"kty":"OKP","crv":"Ed25519","kid":"test-key-ed25519",
 "d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`
)

func rfcTestKey(t testing.TB) Key {
	t.Helper()
	k, err := ParseKey([]byte(testKeyPEM))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestTestKeyThumbprint: the thumbprint of the RFC 9421 key, read from its
// PEM and from its JWK, is the keyid of the draft's vectors.
func TestTestKeyThumbprint(t *testing.T) {
	j, err := ParseKey([]byte(testKeyJWK))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []Key{rfcTestKey(t), j} {
		if got := k.Thumbprint(); got != "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U" {
			t.Errorf("thumbprint %s", got)
		}
	}
}

// TestRFC9421B26 reproduces RFC 9421 Appendix B.2.6, signing a request
// with Ed25519: the signature base from the request's components, its
// SHA-256, and the Signature-Input and Signature fields, byte for byte.
func TestRFC9421B26(t *testing.T) {
	req, err := http.NewRequest("POST", "http://example.com/foo?param=Value&Pet=dog", strings.NewReader(`{"hello": "world"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Length", "18")
	var lines []line
	for _, name := range []string{"date", "@method", "@path", "@authority", "content-type", "content-length"} {
		v, err := requestValue(req, component{name: name})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line{component{name: name}, v})
	}
	params := httpsfv.NewParams()
	params.Add("created", int64(1618884473))
	params.Add("keyid", "test-key-ed25519")
	base, input, sig, err := signLines(rfcTestKey(t).priv, "sig-b26", lines, params)
	if err != nil {
		t.Fatal(err)
	}
	const wantBase = `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
	if base != wantBase {
		t.Errorf("base:\n%s\nwant:\n%s", base, wantBase)
	}
	sum := sha256.Sum256([]byte(base))
	if len(base) != 284 || hex.EncodeToString(sum[:]) != "e6402577f54303accfda63dfbde1a7b8c5e5e6f3f7898637b7d78dc07ee1896a" {
		t.Errorf("base: %d bytes, SHA-256 %x", len(base), sum)
	}
	want(t, "Signature-Input", input, `sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`)
	want(t, "Signature", sig, `sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:`)
}

// TestWebBotAuthVectors reproduces the Web Bot Auth draft's request
// vectors (Appendix E.2.1, E.2.2 and the @authority-only one) through the
// signer's own path: Signature-Agent set, components valued, parameters
// filled in (keyid, alg and tag by the signer; created, expires and nonce
// as the vectors give them).
func TestWebBotAuthVectors(t *testing.T) {
	const kid = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"
	s, err := NewSigner("https://signature-agent.test", []Key{rfcTestKey(t)}, AllowTestKey())
	if err != nil {
		t.Fatal(err)
	}
	params := func(expires int64, nonce string) []param {
		return []param{{"created", int64(1735689600)}, {name: "keyid"}, {name: "alg"},
			{"expires", expires}, {"nonce", nonce}, {name: "tag"}}
	}
	for _, tc := range []struct {
		name            string
		spec            spec
		agent, base, in string
		sig             string
	}{{
		name: "E.2.1 Dictionary",
		spec: spec{label: "sig2", comps: []component{{name: "@authority"}, {name: "signature-agent", key: "agent2"}},
			params: params(4889289600, "n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==")},
		agent: `agent2="https://signature-agent.test"`,
		base: `"@authority": example.com
"signature-agent";key="agent2": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent";key="agent2");created=1735689600;keyid="` + kid + `";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`,
		in:  `sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="` + kid + `";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`,
		sig: `sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:`,
	}, {
		name: "E.2.2 legacy String",
		spec: spec{label: "sig2", comps: []component{{name: "@authority"}, {name: "signature-agent"}},
			params: params(1735693200, "e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==")},
		agent: `"https://signature-agent.test"`,
		base: `"@authority": example.com
"signature-agent": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent");created=1735689600;keyid="` + kid + `";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`,
		sig: `sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:`,
	}, {
		name: "@authority only",
		spec: spec{label: "sig1", comps: []component{{name: "@authority"}},
			params: params(4889289600, "zIW8+cdmA3vdYagbxojpONwa/l0EKJ/O3/wD486VvsQjO/RxPaSt6ZxvQaMcQzNnqKN/mQ6hpGiFro2L2qkz5A==")},
		base: `"@authority": example.com
"@signature-params": ("@authority");created=1735689600;keyid="` + kid + `";alg="ed25519";expires=4889289600;nonce="zIW8+cdmA3vdYagbxojpONwa/l0EKJ/O3/wD486VvsQjO/RxPaSt6ZxvQaMcQzNnqKN/mQ6hpGiFro2L2qkz5A==";tag="web-bot-auth"`,
		sig: `sig1=:QKN4fTdIYfh82fvoZCQiQA1weuozfCS/Led2zTMbewMMqH8PI2Wsy/5c4ao6B6D09nraNQdBNOADg8aM1MqfCg==:`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "https://example.com/path/to/resource", nil)
			base, err := s.sign(req, time.Unix(1735689600, 0), &tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if base != tc.base {
				t.Errorf("base:\n%s\nwant:\n%s", base, tc.base)
			}
			want(t, "Signature-Agent", req.Header.Get("Signature-Agent"), tc.agent)
			if tc.in != "" {
				want(t, "Signature-Input", req.Header.Get("Signature-Input"), tc.in)
			}
			want(t, "Signature", req.Header.Get("Signature"), tc.sig)
		})
	}
}

// TestDirectoryVector reproduces the draft's signed directory response
// (Appendix E.2.3) from the handler: the JWK Set body, its Content-Digest,
// and the binding signature over "@authority";req and content-digest.
func TestDirectoryVector(t *testing.T) {
	const created, expires = 1735689600, 4889289600
	d, err := NewDirectory("http://signature-agent.test", []Key{rfcTestKey(t)}, AllowTestKey(), WithClock(func() time.Time { return time.Unix(created, 0) }))
	if err != nil {
		t.Fatal(err)
	}
	d.maxAge = (expires - created) * time.Second // beyond WithMaxAge's range, as the vector is
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", "http://signature-agent.test"+DirectoryPath, nil))
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	want(t, "body", rec.Body.String(), `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}`)
	h := rec.Header()
	want(t, "Content-Type", h.Get("Content-Type"), DirectoryMediaType)
	want(t, "Content-Digest", h.Get("Content-Digest"), "sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:")
	want(t, "Signature-Input", h.Get("Signature-Input"), `binding=("@authority";req "content-digest");created=1735689600;expires=4889289600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";tag="http-message-signatures-directory"`)
	want(t, "Signature", h.Get("Signature"), "binding=:l6P8R67tm3kujAxbHWio7ll01qrEZ0dKD/WWlGhNYEmTnFZM8Wt0VQ9zqGfvo7T/UMkBxsigzChM1Gpz7gOVBg==:")
}

func want(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}
