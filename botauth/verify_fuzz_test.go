package botauth

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// FuzzVerify feeds a Verifier any Signature-Input, Signature and
// Signature-Agent fields: it never panics, gives one of the five
// verdicts with a reason, and never
// verifies (no key directory is reachable). Seeds are in
// testdata/fuzz/FuzzVerify.
func FuzzVerify(f *testing.F) {
	f.Add(`sig1=("@authority" "signature-agent");created=1800000000;expires=1800000060;keyid="k";nonce="n";tag="web-bot-auth"`,
		`sig1=:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==:`, `"https://bot.example"`)
	f.Add(`sig1=("@authority" "signature-agent";key="sig1");created=1800000000;expires=1800000060;keyid="k";nonce="n";tag="web-bot-auth"`,
		`sig1=:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==:`, `sig1="https://bot.example"`)
	refuse := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no network while fuzzing")
	}}}
	v, err := NewVerifier(VerifyClient(refuse), VerifyClock(func() time.Time { return time.Unix(1_800_000_010, 0) }))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, input, sig, agent string) {
		r := httptest.NewRequest("GET", "https://shop.example/p?q=1", nil)
		for name, val := range map[string]string{"Signature-Input": input, "Signature": sig, "Signature-Agent": agent} {
			if val != "" {
				r.Header[name] = []string{val}
			}
		}
		res := v.Verify(r)
		switch {
		case res.Verdict > Unknown:
			t.Fatalf("verdict %d", res.Verdict)
		case res.Verdict == Verified:
			t.Fatalf("verified with no directory: %+v", res)
		case res.Reason == "":
			t.Fatalf("verdict %v, reason %q", res.Verdict, res.Reason)
		case res.Verdict == Unsigned && (input != "" || sig != ""):
			t.Fatalf("unsigned with signature fields: %+v", res)
		case len(res.Reason) > 512:
			t.Fatalf("a reason of %d bytes", len(res.Reason))
		}
	})
}

// FuzzReadDirectory feeds the key directory reader any response: it never
// panics, and a directory it accepts holds at most the bounded number of
// keys, each a full Ed25519 public key. Seeds are in
// testdata/fuzz/FuzzReadDirectory.
func FuzzReadDirectory(f *testing.F) {
	f.Add(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}`,
		"sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:",
		`binding=("@authority";req "content-digest");created=1735689600;expires=4889289600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";tag="http-message-signatures-directory"`,
		"binding=:l6P8R67tm3kujAxbHWio7ll01qrEZ0dKD/WWlGhNYEmTnFZM8Wt0VQ9zqGfvo7T/UMkBxsigzChM1Gpz7gOVBg==:")
	now := time.Unix(1735689600, 0)
	f.Fuzz(func(t *testing.T, body, digest, input, sig string) {
		h := http.Header{"Content-Digest": {digest}, "Signature-Input": {input}, "Signature": {sig}}
		keys, err := readDirectory(h, []byte(body), "signature-agent.test", now, defaultVerifySkew)
		if err != nil {
			return
		}
		if len(keys) == 0 || len(keys) > maxDirKeys {
			t.Fatalf("%d keys accepted", len(keys))
		}
		for kid, k := range keys {
			if len(k.pub) != 32 || thumbprint(k.pub) != kid {
				t.Fatalf("key %s: %x", kid, k.pub)
			}
		}
	})
}
