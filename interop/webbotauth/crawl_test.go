package webbotauth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// record is what the site built on Cloudflare's packages (verify.mjs)
// saw of one request: each verifier's "ok" or error, the project's
// verifier's verdict (the backend's Interop-Verdict), and the status sent.
type record struct {
	Host, Method, URL       string
	Form                    string // of Signature-Agent: string, dictionary, none
	Input, Signature, Agent string // the fields as received
	WBA, HMS                string
	Ours                    string
	Status                  int
	Error                   string
}

// verdictHeader carries the project's verifier's verdict from the backend
// to verify.mjs, which records it.
const verdictHeader = "Interop-Verdict"

// site is the backend behind verify.mjs: two hosts (a and b, their
// authorities as the crawler sees them) with robots.txt, pages, a
// same-host and a cross-host redirect, a 429 and a 503 each asking for a
// retry after a second, and two challenges (401 and 403 with
// Accept-Signature).
type site struct {
	a, b  string // set once verify.mjs listens (under mu)
	agent string // the Signature-Agent component a challenge asks for
	ours  func(*http.Request) string

	mu     sync.Mutex
	hits   map[string]int
	nonces map[string]string // the nonce a challenge asked for, by path
}

// challenge answers 401 or 403 with Accept-Signature, asking for a
// signature over "@authority", "@path" and the Signature-Agent with a new
// nonce, unless r carries the nonce it asked for.
func (s *site) challenge(w http.ResponseWriter, r *http.Request, code int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.nonces[r.URL.Path]; ok && strings.Contains(r.Header.Get("Signature-Input"), `nonce="`+n+`"`) {
		return false
	}
	b := make([]byte, 64)
	rand.Read(b)
	n := base64.StdEncoding.EncodeToString(b)
	s.nonces[r.URL.Path] = n
	w.Header().Set("Accept-Signature",
		fmt.Sprintf(`sig1=("@authority" "@path" %s);created;expires;keyid;nonce="%s";tag="web-bot-auth"`, s.agent, n))
	w.WriteHeader(code)
	return true
}

// hit counts r and returns its number among the requests for its URL, with
// the two authorities.
func (s *site) hit(r *http.Request) (n int, a, b string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := r.Host + r.URL.RequestURI()
	s.hits[k]++
	return s.hits[k], s.a, s.b
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(verdictHeader, s.ours(r))
	n, a, b := s.hit(r)
	page := func(body string) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, body)
	}
	switch r.Host + r.URL.Path {
	case a + "/robots.txt":
		io.WriteString(w, "User-agent: *\nDisallow: /private\nCrawl-delay: 0.1\n")
	case b + "/robots.txt":
		io.WriteString(w, "User-agent: *\nAllow: /\nCrawl-delay: 0.1\n")
	case a + "/":
		page(`<a href="/a">a</a> <a href="/moved">moved</a> <a href="/away">away</a> <a href="/busy">busy</a>
<a href="/down">down</a> <a href="/challenge401">401</a> <a href="/challenge403">403</a>
<a href="/private/x">private</a> <a href="/q?x=1">query</a>`)
	case a + "/moved":
		http.Redirect(w, r, "/a2", http.StatusFound)
	case a + "/away":
		http.Redirect(w, r, "http://"+b+"/landing", http.StatusFound)
	case b + "/landing":
		page(`<a href="/b2">b2</a>`)
	case a + "/busy", a + "/down":
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			code := http.StatusTooManyRequests
			if r.URL.Path == "/down" {
				code = http.StatusServiceUnavailable
			}
			w.WriteHeader(code)
			return
		}
		page("<p>back</p>")
	case a + "/challenge401":
		if !s.challenge(w, r, http.StatusUnauthorized) {
			page("<p>welcome</p>")
		}
	case a + "/challenge403":
		if !s.challenge(w, r, http.StatusForbidden) {
			page("<p>welcome</p>")
		}
	default:
		page("<p>a page</p>")
	}
}

// wantRequests is what a crawl of the site sends: host ("a" or "b"),
// request URI and the status answered.
var wantRequests = []string{
	"a /robots.txt 200", "a / 200", "a /a 200", "a /moved 302", "a /a2 200", "a /away 302",
	"b /robots.txt 200", "b /landing 200", "b /b2 200",
	"a /busy 429", "a /busy 200", "a /down 503", "a /down 200",
	"a /challenge401 401", "a /challenge401 200", "a /challenge403 403", "a /challenge403 200",
	"a /q?x=1 200",
}

// form is one way of signing: examples/crawl's flags beyond -sign-key and
// -signature-agent, the Signature-Agent form the crawl sends and the one a
// challenge asks for ("string" or "dictionary", as record.Form), and how
// far the site's clock is behind the crawler's.
type form struct {
	name        string
	args        []string
	sent, asked string
	behind      int // seconds
}

// verifiers are the table's columns.
var verifiers = []struct{ id, name string }{
	{"wba", "web-bot-auth 0.1.3 (http-message-sig 0.2.0)"},
	{"hms", "http-message-sig 0.3.0"},
	{"ours", "botauth Verifier"},
}

// implementers are the verifiers that implement each form: each must
// accept every request signed in it.
var implementers = map[string][]string{"string": {"wba", "hms", "ours"}, "dictionary": {"hms", "ours"}}

// agentComponent is the Signature-Agent component a challenge asks for in
// each form.
var agentComponent = map[string]string{"string": `"signature-agent"`, "dictionary": `"signature-agent";key="sig1"`}

var (
	dictionary = []string{"-signature-form", "dictionary"}
	cover      = []string{"-cover", "@method,@path,@query"}
)

var forms = []form{
	{name: "String `\"https://…\"` covered bare (the default)", sent: "string", asked: "string"},
	{name: "String, -cover @method,@path,@query", args: cover, sent: "string", asked: "string"},
	{name: "Dictionary `sig1=\"https://…\"` covered with its key (-signature-form dictionary)",
		args: dictionary, sent: "dictionary", asked: "dictionary"},
	{name: "Dictionary, -cover @method,@path,@query", args: append(append([]string{}, dictionary...), cover...), sent: "dictionary", asked: "dictionary"},
	{name: "String (the default), the site's clock 2 s behind the crawler's", sent: "string", asked: "string", behind: 2},
	{name: "String (the default), challenged for the Dictionary form", sent: "string", asked: "dictionary"},
	{name: "Dictionary, challenged for the String form", args: dictionary, sent: "dictionary", asked: "string"},
}

// TestCrawlInterop crawls the site through examples/crawl, signing in each
// form, with the site built on Cloudflare's packages checking every
// request, its key directory served by examples/keydirectory over HTTPS.
// Every verifier that implements a form accepts every request signed in
// it. The log has the table of docs/identity.md.
func TestCrawlInterop(t *testing.T) {
	requireNode(t)
	caFile, certFile, certKey := tlsFiles(t)
	key := newBotKey(t)
	agent := keyDirectory(t, key, certFile, certKey)
	crawl := binary(t, "examples/crawl")
	ours := ourVerifier(t, caFile)

	table := make([]string, len(forms))
	t.Run("forms", func(t *testing.T) {
		for i, f := range forms {
			t.Run(f.name, func(t *testing.T) {
				t.Parallel()
				table[i] = crawlRow(t, f, crawl, key, agent, caFile, ours)
			})
		}
	})
	head, rule := "| form |", "| --- |"
	for _, v := range verifiers {
		head += " " + v.name + " |"
		rule += " --- |"
	}
	t.Logf("accepted/requests:\n%s\n%s\n%s", head, rule, strings.Join(table, "\n"))
}

// crawlRow crawls the site in form f and checks each request; it returns
// the table's row.
func crawlRow(t *testing.T, f form, crawl string, key botKey, agent, caFile string, ours func(*http.Request) string) string {
	s := &site{agent: agentComponent[f.asked], ours: ours, hits: map[string]int{}, nonces: map[string]string{}}
	backend := httptest.NewServer(s)
	defer backend.Close()
	js := start(t, []string{"NODE_EXTRA_CA_CERTS=" + caFile, fmt.Sprintf("CLOCK_BEHIND=%d", f.behind)}, "node", "verify.mjs", backend.URL)
	var ports struct {
		Sites   []int
		Control int
	}
	if err := json.Unmarshal([]byte(js.expect(t, `"sites"`)), &ports); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.a, s.b = fmt.Sprintf("127.0.0.1:%d", ports.Sites[0]), fmt.Sprintf("localhost:%d", ports.Sites[1])
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"-agent", "testbot", "-min-delay", "0", "-progress=false", "-allow", "localhost",
		"-sign-key", key.pemFile, "-signature-agent", agent}, f.args...)
	out, err := exec.CommandContext(ctx, crawl, append(args, "http://"+s.a+"/")...).CombinedOutput()
	if err != nil {
		t.Fatalf("crawl: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "error    ") {
		t.Errorf("the crawl had errors:\n%s", out)
	}

	control := fmt.Sprintf("http://127.0.0.1:%d/", ports.Control)
	recs := records(t, control)
	checkRequests(t, s, recs)
	if len(recs) == 0 {
		t.Fatalf("no request reached the site:\n%s", out)
	}
	replayed(t, s, recs[0], control)
	accepted, reasons := map[string]int{}, map[string]int{}
	for _, r := range recs {
		want := f.sent
		if strings.Contains(r.URL, "/challenge") && r.Status == http.StatusOK {
			want = f.asked // the challenge's answer
		}
		if r.Form != want {
			t.Errorf("%s %s: Signature-Agent %s (%s), want the %s form", r.Method, r.URL, r.Agent, r.Form, want)
		}
		ok := map[string]bool{"wba": r.WBA == "ok", "hms": r.HMS == "ok", "ours": r.Ours == "verified"}
		why := map[string]string{"wba": r.WBA, "hms": r.HMS, "ours": r.Ours}
		for _, v := range verifiers {
			if ok[v.id] {
				accepted[v.id]++
			} else {
				reasons[v.id+": "+why[v.id]]++
			}
		}
		for _, id := range implementers[r.Form] {
			if !ok[id] {
				t.Errorf("%s %s (%d) not accepted by %s: %s%s\n  Signature-Input: %s", r.Method, r.URL, r.Status, id, why[id], r.Error, r.Input)
			}
		}
	}
	row := "| " + f.name + " |"
	for _, v := range verifiers {
		row += fmt.Sprintf(" %d/%d |", accepted[v.id], len(recs))
	}
	for r, n := range reasons {
		t.Logf("refused %d times by %s", n, r)
	}
	return row
}

// checkRequests fails t unless recs are the requests a crawl of s sends,
// each answered as planned.
func checkRequests(t *testing.T, s *site, recs []record) {
	t.Helper()
	want := map[string]int{}
	for _, w := range wantRequests {
		want[w]++
	}
	for _, r := range recs {
		host := map[string]string{s.a: "a", s.b: "b"}[r.Host]
		uri := strings.TrimPrefix(r.URL, "http://"+r.Host)
		want[fmt.Sprintf("%s %s %d", host, uri, r.Status)]--
	}
	for w, n := range want {
		if n != 0 {
			t.Errorf("%q: %d requests fewer than planned", w, n)
		}
	}
}

// records is the log of verify.mjs.
func records(t *testing.T, control string) []record {
	t.Helper()
	resp, err := http.Get(control)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var recs []record
	if err := json.NewDecoder(resp.Body).Decode(&recs); err != nil {
		t.Fatal(err)
	}
	return recs
}

// replayed sends the signature of r, a request to host a, to host b, and
// then a request without a signature: every verifier must refuse both (the
// check that each reads "@authority" from the request it verifies, and
// does not accept whatever comes).
func replayed(t *testing.T, s *site, r record, control string) {
	t.Helper()
	for _, path := range []string{"/replayed", "/unsigned"} {
		req, _ := http.NewRequest("GET", "http://"+s.b+path, nil)
		if path == "/replayed" {
			req.Header.Set("Signature", r.Signature)
			req.Header.Set("Signature-Input", r.Input)
			req.Header.Set("Signature-Agent", r.Agent)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		recs := records(t, control)
		last := recs[len(recs)-1]
		if last.URL != "http://"+s.b+path || last.WBA == "ok" || last.HMS == "ok" || last.Ours == "verified" {
			t.Errorf("%s: accepted: %+v", path, last)
		}
	}
}
