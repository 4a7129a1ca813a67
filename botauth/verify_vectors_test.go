package botauth

import (
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
)

// TestVerifyDraftVectors rebuilds the signature bases of the Web Bot Auth
// draft's request vectors (Appendix E.2.1, the Dictionary form, and
// E.2.2, the String form) from the requests as a server receives them,
// byte for byte, and checks the published signatures over them with the
// RFC 9421 test key. Their lifetimes exceed any window a Verifier accepts,
// so the clock checks are left to the other tests.
func TestVerifyDraftVectors(t *testing.T) {
	pub := rfcTestKey(t).priv.Public().(ed25519.PublicKey)
	for _, tc := range []struct{ name, agent, input, sig, base string }{
		{"E.2.1 dictionary", `agent2="https://signature-agent.test"`,
			`sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`,
			`sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:`,
			`"@authority": example.com
"signature-agent";key="agent2": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`},
		{"E.2.2 string", `"https://signature-agent.test"`,
			`sig2=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`,
			`sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:`,
			`"@authority": example.com
"signature-agent": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "https://example.com/path/to/resource", nil)
			r.Header.Set("Signature-Agent", tc.agent)
			in, err := httpsfv.UnmarshalDictionary([]string{tc.input})
			if err != nil {
				t.Fatal(err)
			}
			m, _ := in.Get("sig2")
			res := Result{Label: "sig2"}
			base, agentCovered, err := requestBase(r, m.(httpsfv.InnerList), &res)
			if err != nil || !agentCovered || base != tc.base || res.Agent != "https://signature-agent.test" {
				t.Fatalf("base (agent covered %v, agent %q, %v):\n%s\nwant:\n%s", agentCovered, res.Agent, err, base, tc.base)
			}
			sd, err := httpsfv.UnmarshalDictionary([]string{tc.sig})
			if err != nil {
				t.Fatal(err)
			}
			sm, _ := sd.Get("sig2")
			if !ed25519.Verify(pub, []byte(base), sm.(httpsfv.Item).Value.([]byte)) {
				t.Fatal("the published signature does not verify over the rebuilt base")
			}
		})
	}
}

// TestVerifyDirectoryVector reads the draft's signed directory response
// (Appendix E.2.3) as served at signature-agent.test: its one key is
// found, signed; served at another authority, it gives none.
func TestVerifyDirectoryVector(t *testing.T) {
	body := []byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}`)
	h := http.Header{}
	h.Set("Content-Digest", "sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:")
	h.Set("Signature-Input", `binding=("@authority";req "content-digest");created=1735689600;expires=4889289600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";tag="http-message-signatures-directory"`)
	h.Set("Signature", "binding=:l6P8R67tm3kujAxbHWio7ll01qrEZ0dKD/WWlGhNYEmTnFZM8Wt0VQ9zqGfvo7T/UMkBxsigzChM1Gpz7gOVBg==:")
	now := time.Unix(1735689600, 0)
	keys, err := readDirectory(h, body, "signature-agent.test", now, 0)
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %v, error %v", keys, err)
	}
	if _, ok := keys["poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"]; !ok {
		t.Fatalf("keys %v", keys)
	}
	if keys, err := readDirectory(h, body, "evil.example", now, 0); err == nil {
		t.Fatalf("served at evil.example: keys %v", keys)
	}
	if keys, err := readDirectory(h, body, "signature-agent.test", now.Add(-time.Minute), 0); err == nil {
		t.Fatalf("a signature created in the future: keys %v", keys)
	}
}
