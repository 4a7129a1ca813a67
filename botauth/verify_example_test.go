package botauth_test

import (
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/politecrawl/robots/botauth"
)

// exampleCrawler serves the example key's directory over HTTPS and
// returns its Signature-Agent and a client that trusts its certificate.
func exampleCrawler() (agent string, client *http.Client, stop func()) {
	srv := httptest.NewUnstartedServer(nil)
	agent = "https://" + srv.Listener.Addr().String() + botauth.DirectoryPath
	d, err := botauth.NewDirectory(agent, []botauth.Key{exampleKey()})
	if err != nil {
		log.Fatal(err)
	}
	srv.Config.Handler = d
	srv.StartTLS()
	return agent, srv.Client(), srv.Close
}

// A site checks a request as it receives it. The directory here is on a
// loopback address with a test certificate, so the verifier is given the
// client that trusts it; a site leaves the default, which refuses such
// addresses.
func ExampleVerifier_Verify() {
	agent, client, stop := exampleCrawler()
	defer stop()
	v, err := botauth.NewVerifier(botauth.VerifyClient(client))
	if err != nil {
		log.Fatal(err)
	}
	s, err := botauth.NewSigner(agent, []botauth.Key{exampleKey()})
	if err != nil {
		log.Fatal(err)
	}
	r := httptest.NewRequest("GET", "https://shop.example/page", nil)
	if err := s.Sign(r, time.Now()); err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.Verify(r).Verdict)
	res := v.Verify(r) // the same signature again
	fmt.Println(res.Verdict, res.Reason)
	res = v.Verify(httptest.NewRequest("GET", "https://shop.example/page", nil))
	fmt.Println(res.Verdict)
	// Output:
	// verified
	// invalid nonce replayed
	// unsigned
}

// The middleware verifies and lets the handler decide: here, a signed
// crawler is served, anyone else is asked to slow down.
func ExampleVerifier_Handler() {
	agent, client, stop := exampleCrawler()
	defer stop()
	v, err := botauth.NewVerifier(botauth.VerifyClient(client), botauth.VerifySkew(2*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	site := httptest.NewServer(v.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if res, _ := botauth.ResultOf(r); res.Verdict != botauth.Verified {
			w.Header().Set("Retry-After", "60")
			http.Error(w, res.Verdict.String(), http.StatusTooManyRequests)
			return
		}
		fmt.Fprintln(w, "welcome")
	})))
	defer site.Close()

	s, err := botauth.NewSigner(agent, []botauth.Key{exampleKey()})
	if err != nil {
		log.Fatal(err)
	}
	tr, err := botauth.NewTransport(http.DefaultTransport, s)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range []*http.Client{{Transport: tr}, http.DefaultClient} {
		resp, err := c.Get(site.URL)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	// Output:
	// 200 OK
	// 429 Too Many Requests
}

// A verifier for a site whose clocks are kept well, accepting signatures
// that last up to a minute; an option out of range is refused.
func ExampleNewVerifier() {
	v, err := botauth.NewVerifier(botauth.VerifySkew(time.Second), botauth.VerifyWindow(time.Minute))
	fmt.Println(v != nil, err)
	_, err = botauth.NewVerifier(botauth.VerifyWindow(48 * time.Hour))
	fmt.Println(errors.Is(err, botauth.ErrOption))
	// Output:
	// true <nil>
	// true
}
