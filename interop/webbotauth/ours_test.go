package webbotauth

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"testing"

	"github.com/politecrawl/robots/botauth"
)

// ourVerifier is the project's verifier, its client trusting the CA in
// caFile; its answer is the verdict, with the reason unless verified.
func ourVerifier(t *testing.T, caFile string) func(*http.Request) string {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	v, err := botauth.NewVerifier(botauth.VerifyClient(&http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}))
	if err != nil {
		t.Fatal(err)
	}
	return func(r *http.Request) string {
		res := v.Verify(r)
		if res.Verdict != botauth.Verified {
			return res.Verdict.String() + ": " + res.Reason
		}
		return res.Verdict.String()
	}
}
