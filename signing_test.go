package robots

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/robots/botauth"
	"github.com/politecrawl/robots/hostlimit"
	"github.com/politecrawl/robots/testkit/botauthtest"
)

const testAgent = "https://bot.example/.well-known/http-message-signatures-directory"

// testKey is a key made from seed.
func testKey(t *testing.T, seed byte) botauth.Key {
	t.Helper()
	k, err := botauth.NewKey(ed25519.NewKeyFromSeed([]byte(strings.Repeat(string([]byte{seed}), ed25519.SeedSize))))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testDirectory serves k's key directory over TLS on clock now, and
// returns its URL (the Signature-Agent) and the verifier of a site, on the
// same clock, that trusts its certificate.
func testDirectory(t *testing.T, k botauth.Key, now func() time.Time) (string, *botauth.Verifier) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	agent := "https://" + srv.Listener.Addr().String() + botauth.DirectoryPath
	d, err := botauth.NewDirectory(agent, []botauth.Key{k}, botauth.WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = d
	srv.StartTLS()
	t.Cleanup(srv.Close)
	v, err := botauth.NewVerifier(botauth.VerifyClient(srv.Client()), botauth.VerifyClock(now), botauth.VerifyWindow(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return agent, v
}

// testSigner is a signer of a key made from seed, and the verifier of a
// site that finds the key in its directory.
func testSigner(t *testing.T, seed byte) (*botauth.Signer, *botauth.Verifier) {
	t.Helper()
	k := testKey(t, seed)
	agent, v := testDirectory(t, k, time.Now)
	s, err := botauth.NewSigner(agent, []botauth.Key{k})
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

// TestSignerSignsEveryRequest crawls two hosts with a real collector: a's
// robots.txt names a sitemap whose page answers 503 once (the plugin's
// retry), and a's start page redirects to b. With WithSigner every request
// (both robots.txt, the sitemap, the pages, the redirect hop, the retry)
// carries a signature botauth's Verifier accepts for its own authority,
// each with a fresh nonce; without it none carries a
// signature field.
func TestSignerSignsEveryRequest(t *testing.T) {
	for _, signed := range []bool{true, false} {
		t.Run(fmt.Sprint("signed=", signed), func(t *testing.T) {
			s, v := testSigner(t, 1)
			log := &botauthtest.SiteLog{V: v}
			b := httptest.NewServer(log.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					io.WriteString(w, "User-agent: *\nAllow: /\n")
				}
			})))
			defer b.Close()
			bu, _ := url.Parse(b.URL)
			bu.Host = "localhost:" + bu.Port() // another host name
			var flaky atomic.Int32
			var a *httptest.Server
			a = httptest.NewServer(log.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/robots.txt":
					fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", a.URL)
				case "/sitemap.xml":
					fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/listed</loc></url></urlset>`, a.URL)
				case "/listed":
					if flaky.Add(1) == 1 {
						w.Header().Set("Retry-After", "1")
						w.WriteHeader(http.StatusServiceUnavailable)
					}
				case "/":
					http.Redirect(w, r, bu.String()+"/landing", http.StatusFound)
				}
			})))
			defer a.Close()

			opts := []Option{fakeLimiter(t), WithDefaultDelay(0), WithSitemaps()}
			if signed {
				opts = append(opts, WithSigner(s))
			}
			c := colly.NewCollector(colly.UserAgent("Mozilla/5.0 (compatible; TestBot/0.1; +https://bot.example/about)"))
			p := mustAttach(t, c, opts...)
			defer p.Close()
			if err := c.Visit(a.URL + "/"); err != nil {
				t.Fatal(err)
			}
			c.Wait()

			au, _ := url.Parse(a.URL)
			want := map[string]int{au.Host + "/robots.txt": 1, au.Host + "/sitemap.xml": 1, au.Host + "/listed": 2,
				au.Host + "/": 1, bu.Host + "/robots.txt": 1, bu.Host + "/landing": 1}
			nonces := map[string]bool{}
			for _, got := range log.Seen() {
				want[got.Host+got.Path]--
				switch {
				case !signed:
					if got.Signed {
						t.Errorf("%s%s: signed without a signer (%s)", got.Host, got.Path, got.Input)
					}
				case got.Res.Verdict != botauth.Verified:
					t.Errorf("%s%s: %v: %s", got.Host, got.Path, got.Res.Verdict, got.Res.Reason)
				case nonces[got.Res.Nonce]:
					t.Errorf("%s%s: a nonce seen before", got.Host, got.Path)
				}
				nonces[got.Res.Nonce] = true
			}
			for k, n := range want {
				if n != 0 {
					t.Errorf("%s: %d requests fewer than expected", k, n)
				}
			}
		})
	}
}

// countingLimiter is a hostlimit.Limiter that counts the permits it gave.
type countingLimiter struct {
	*hostlimit.Limiter
	acquired atomic.Int32
}

func (l *countingLimiter) AcquireMax(ctx context.Context, host string, delay, maxPause time.Duration) (hostlimit.Permit, error) {
	pm, err := l.Limiter.AcquireMax(ctx, host, delay, maxPause)
	if err == nil {
		l.acquired.Add(1)
	}
	return pm, err
}

// TestSignerAnswersChallenge: a page answered with a challenge (401, or a
// 429 that the plugin would otherwise retry unsigned) is sent again once,
// signed as the challenge asks, through the host's gate: the answer waits
// its turn there (a third permit after robots.txt's and the page's) rather
// than deadlock on the permit the challenged response held, and is signed
// though the wait outlived the collector's request timeout's start. With
// OnlyWhenChallenged the robots.txt fetch and the first request go
// unsigned.
func TestSignerAnswersChallenge(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusTooManyRequests} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			s, v := testSigner(t, 2)
			log := &botauthtest.SiteLog{V: v}
			kid := testKey(t, 2).Thumbprint()
			ask := fmt.Sprintf(`chal=("@authority" "@path" "signature-agent";key="chal");created;expires;keyid=%q;nonce="srv-1";tag="web-bot-auth"`, kid)
			srv := httptest.NewServer(log.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					io.WriteString(w, "User-agent: *\nAllow: /\n")
					return
				}
				if res, _ := botauth.ResultOf(r); res.Verdict == botauth.Verified && res.Label == "chal" && res.Nonce == "srv-1" {
					io.WriteString(w, "welcome")
					return
				}
				w.Header().Set("Accept-Signature", ask)
				w.WriteHeader(status)
				io.WriteString(w, strings.Repeat("sign please ", 100))
			})))
			defer srv.Close()

			lim := &countingLimiter{Limiter: hostlimit.New(hostlimit.Config{Clock: jumpingClock(t)})}
			c := colly.NewCollector(colly.UserAgent("Mozilla/5.0 (compatible; TestBot/0.1; +https://bot.example/about)"))
			p := mustAttach(t, c, WithLimiter(lim), WithDefaultDelay(20*time.Millisecond), WithSigner(s, botauth.OnlyWhenChallenged()))
			defer p.Close()
			var body string
			c.OnResponse(func(r *colly.Response) { body = string(r.Body) })
			c.OnError(func(r *colly.Response, err error) { t.Errorf("OnError: %d %v", r.StatusCode, err) })
			if err := c.Visit(srv.URL + "/members"); err != nil {
				t.Error(err)
			}
			if body != "welcome" {
				t.Errorf("body %q", body)
			}
			seen := log.Seen()
			if len(seen) != 3 || seen[0].Signed || seen[1].Signed || seen[2].Res.Verdict != botauth.Verified || seen[2].Path != "/members" {
				t.Fatalf("the site saw %+v", seen)
			}
			if n := lim.acquired.Load(); n != 3 {
				t.Errorf("%d permits, want 3 (robots.txt, the page, the answer)", n)
			}
		})
	}
}

// TestWithSignerRefused: WithSigner without a signer, with an option the
// signing transport cannot act on, or along with a signing WithTransport
// is an error of New.
func TestWithSignerRefused(t *testing.T) {
	s, _ := testSigner(t, 3)
	tr, err := botauth.NewTransport(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string][]Option{
		"nil signer":      {WithSigner(nil)},
		"signer option":   {WithSigner(s, botauth.WithWindow(time.Hour))},
		"signed twice":    {WithSigner(s), WithTransport(tr)},
		"signed twice, 2": {WithTransport(tr), WithSigner(s)},
	} {
		if _, err := New(opts...); err == nil || !strings.Contains(err.Error(), "WithSigner") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := New(WithSigner(nil)); !errors.Is(err, botauth.ErrOption) {
		t.Errorf("nil signer: %v does not wrap botauth.ErrOption", err)
	}
}

// TestSignerSignsAfterTheGate: under a Crawl-delay of 10 s (on a fake
// clock the limiter and the signer share), each page's signature is made
// when the gate lets it through: its created is the clock's time when the
// site receives it (less the signer's 5 s skew), 10 s after the previous page's, not the time the
// request began to wait.
func TestSignerSignsAfterTheGate(t *testing.T) {
	clock := jumpingClock(t)
	k := testKey(t, 4)
	agent, v := testDirectory(t, k, clock.Now)
	s, err := botauth.NewSigner(agent, []botauth.Key{k}, botauth.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	var received []int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nCrawl-delay: 10\n")
			return
		}
		res := v.Verify(r)
		if res.Verdict != botauth.Verified {
			t.Errorf("%s: %v: %s", r.URL.Path, res.Verdict, res.Reason)
		}
		if now := clock.Now().Unix(); res.Created.Unix() != now-5 { // back-dated by the default skew
			t.Errorf("%s: created %d, received at %d", r.URL.Path, res.Created.Unix(), now)
		}
		received = append(received, res.Created.Unix())
	}))
	defer srv.Close()
	c := colly.NewCollector(colly.UserAgent("Mozilla/5.0 (compatible; TestBot/0.1; +https://bot.example/about)"))
	p := mustAttach(t, c, WithLimiter(hostlimit.New(hostlimit.Config{Clock: clock})), WithSigner(s))
	defer p.Close()
	for _, path := range []string{"/1", "/2", "/3"} {
		if err := c.Visit(srv.URL + path); err != nil {
			t.Fatal(err)
		}
	}
	if len(received) != 3 || received[1]-received[0] < 10 || received[2]-received[1] < 10 {
		t.Errorf("pages signed at %v, want 10 s apart at least", received)
	}
}

// TestSignerAnswersRobotsChallenge: a robots.txt fetch answered with a
// challenge is answered too, through the gate: the site gives its rules
// only to the signed answer, and they stop the page.
func TestSignerAnswersRobotsChallenge(t *testing.T) {
	s, v := testSigner(t, 5)
	ask := `chal=("@authority" "signature-agent";key="chal");created;expires;keyid;nonce="srv-2";tag="web-bot-auth"`
	log := &botauthtest.SiteLog{V: v}
	srv := httptest.NewServer(log.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if res, _ := botauth.ResultOf(r); res.Verdict == botauth.Verified && res.Label == "chal" && res.Nonce == "srv-2" {
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		w.Header().Set("Accept-Signature", ask)
		w.WriteHeader(http.StatusForbidden)
	})))
	defer srv.Close()
	lim := &countingLimiter{Limiter: hostlimit.New(hostlimit.Config{Clock: jumpingClock(t)})}
	var blocked []Block
	c := colly.NewCollector(colly.UserAgent("Mozilla/5.0 (compatible; TestBot/0.1; +https://bot.example/about)"))
	p := mustAttach(t, c, WithLimiter(lim), WithSigner(s, botauth.OnlyWhenChallenged()),
		WithOnBlocked(func(b Block) { blocked = append(blocked, b) }))
	defer p.Close()
	if err := c.Visit(srv.URL + "/private/x"); !errors.Is(err, ErrBlocked) {
		t.Errorf("Visit: %v", err)
	}
	seen := log.Seen()
	if len(blocked) != 1 || blocked[0].Kind != Disallowed || len(seen) != 2 || seen[0].Signed || seen[1].Res.Verdict != botauth.Verified {
		t.Errorf("blocked %+v; the site saw %+v", blocked, seen)
	}
	if n := lim.acquired.Load(); n != 2 {
		t.Errorf("%d permits, want 2 (robots.txt and its answer)", n)
	}
}

// TestFreshDeadlineKeepsValues: the copy of a request that waited at the
// gate past the start of its client timeout keeps its context's values
// (a challenge's answer is marked there for the signer), gets a deadline
// budget from now, and ends when the collector's context ends.
func TestFreshDeadlineKeepsValues(t *testing.T) {
	type mark struct{}
	base, cancelBase := context.WithCancel(context.Background())
	reqCtx, cancelReq := context.WithTimeout(context.WithValue(base, mark{}, "answer"), time.Minute)
	defer cancelReq()
	req := httptest.NewRequest("GET", "http://a.test/", nil).WithContext(reqCtx)
	r, cancel := freshDeadline(req, base, time.Hour, time.Now().Add(-time.Second), false)
	if cancel == nil {
		t.Fatal("no fresh deadline after a second's wait")
	}
	defer cancel()
	if r.Context().Value(mark{}) != "answer" {
		t.Error("the request context's value was dropped")
	}
	if dl, ok := r.Context().Deadline(); !ok || time.Until(dl) < 59*time.Minute {
		t.Errorf("deadline %v, want an hour from now", dl)
	}
	cancelBase()
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
		t.Error("the copy outlived the collector's context")
	}
}
