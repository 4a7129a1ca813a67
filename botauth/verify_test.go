package botauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots/testkit/testutil"
)

// A form is a Signature-Agent form and the signer options that make it.
type form struct {
	name string
	opts []Option
}

// forms are both Signature-Agent forms, each named by explicit options
// where one exists.
var forms = []form{
	{"string", []Option{WithForm(StringForm)}},
	{"dictionary", []Option{WithForm(DictionaryForm)}},
}

// verifySetup is a crawler's key directory served over TLS, counting its
// fetches, and a site's verifier that trusts its certificate.
type verifySetup struct {
	clock   *testutil.StepClock
	keys    []Key
	agent   string
	srv     *httptest.Server
	fetches atomic.Int32
	v       *Verifier
}

func newVerifySetup(t *testing.T, keys []Key, vopts ...VerifyOption) *verifySetup {
	t.Helper()
	s := &verifySetup{clock: testutil.NewStepClock(), keys: keys}
	s.srv, s.agent = tlsDirectory(t, keys, func(d *Directory) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.fetches.Add(1)
			d.ServeHTTP(w, r)
		})
	}, WithClock(s.clock.Now), WithMaxAge(time.Hour))
	opts := append([]VerifyOption{VerifyClient(s.srv.Client()), VerifyClock(s.clock.Now)}, vopts...)
	var err error
	if s.v, err = NewVerifier(opts...); err != nil {
		t.Fatal(err)
	}
	return s
}

// tlsDirectory serves the key directory of keys over TLS at its
// well-known path, through wrap when it is not nil, and returns the server
// and the directory's URL.
func tlsDirectory(t testing.TB, keys []Key, wrap func(*Directory) http.Handler, opts ...Option) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	u := "https://" + srv.Listener.Addr().String() + DirectoryPath
	d, err := NewDirectory(u, keys, opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = d
	if wrap != nil {
		srv.Config.Handler = wrap(d)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, u
}

// signer is a Signer for the setup's agent in form f with more options.
func (s *verifySetup) signer(t *testing.T, f form, opts ...Option) *Signer {
	t.Helper()
	sg, err := NewSigner(s.agent, s.keys, append(append([]Option(nil), f.opts...), opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return sg
}

// signed is a request to target as a server receives it, signed at at.
func signed(t *testing.T, sg *Signer, target string, at time.Time) *http.Request {
	t.Helper()
	r := httptest.NewRequest("GET", target, nil)
	if err := sg.Sign(r, at); err != nil {
		t.Fatal(err)
	}
	return r
}

// labelOf is the label of a Signature field of one member.
func labelOf(sig string) string {
	l, _, _ := strings.Cut(sig, "=")
	return l
}

func wantVerdict(t *testing.T, res Result, want Verdict, reason string) {
	t.Helper()
	if res.Verdict != want || !strings.Contains(res.Reason, reason) || (want == Verified) != (res.Reason == "") {
		t.Fatalf("verdict %v (%q), want %v with a reason holding %q; result %+v", res.Verdict, res.Reason, want, reason, res)
	}
}

func TestVerifyBothForms(t *testing.T) {
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			s := newVerifySetup(t, []Key{seedKey(t, 1)})
			sg := s.signer(t, f, Cover("@method", "@path"))
			res := s.v.Verify(signed(t, sg, "https://shop.example/a?b=c", s.clock.Now()))
			wantVerdict(t, res, Verified, "")
			if res.Agent != s.agent || res.KeyID != s.keys[0].Thumbprint() || res.Label == "" || res.Nonce == "" ||
				len(res.Components) != 4 || res.Components[0] != `"@authority"` ||
				!strings.HasPrefix(res.Components[1], `"signature-agent"`) ||
				res.Expires.Sub(res.Created) != time.Minute {
				t.Fatalf("result %+v", res)
			}
			// A request to the same site on plain HTTP: the default port
			// differs, the authority does not.
			wantVerdict(t, s.v.Verify(signed(t, sg, "http://shop.example/", s.clock.Now())), Verified, "")
			// A Signature-Agent naming the origin alone: the directory is
			// read at the well-known path there.
			s.agent = s.srv.URL
			res = s.v.Verify(signed(t, s.signer(t, f), "https://shop.example/", s.clock.Now()))
			wantVerdict(t, res, Verified, "")
			if res.Agent != s.srv.URL {
				t.Fatalf("agent %s", res.Agent)
			}
		})
	}
}

func TestVerifyRejects(t *testing.T) {
	s := newVerifySetup(t, []Key{seedKey(t, 2)})
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			sg := s.signer(t, f)
			now := s.clock.Now()

			// Made for another authority, sent here.
			r := signed(t, sg, "https://evil.example/", now)
			r.Host = "shop.example"
			wantVerdict(t, s.v.Verify(r), Invalid, "does not verify")

			// Replayed: the same signature twice.
			r = signed(t, sg, "https://shop.example/", now)
			again := httptest.NewRequest("GET", "https://shop.example/other", nil)
			again.Header = r.Header.Clone()
			wantVerdict(t, s.v.Verify(r), Verified, "")
			wantVerdict(t, s.v.Verify(again), Invalid, "nonce replayed")

			// created beyond the skew ahead of the site's clock (by more than
			// a signer back-dates it).
			wantVerdict(t, s.v.Verify(signed(t, sg, "https://shop.example/", now.Add(defaultVerifySkew+30*time.Second))), Invalid, "future")
			// ... and within it.
			wantVerdict(t, s.v.Verify(signed(t, sg, "https://shop.example/", now.Add(defaultVerifySkew-time.Second))), Verified, "")

			// Expired.
			wantVerdict(t, s.v.Verify(signed(t, sg, "https://shop.example/", now.Add(-2*time.Minute))), Expired, "expired")

			// Tampered signature bytes.
			r = signed(t, sg, "https://shop.example/", now)
			sig := r.Header.Get("Signature")
			i := len(labelOf(sig)) + 3
			r.Header.Set("Signature", sig[:i]+map[bool]string{true: "B", false: "A"}[sig[i] == 'A']+sig[i+1:])
			wantVerdict(t, s.v.Verify(r), Invalid, "does not verify")

			// The signer's Signature-Agent replaced by its origin alone:
			// the directory is found there, the signature fails.
			r = signed(t, sg, "https://shop.example/", now)
			r.Header.Set("Signature-Agent", strings.Replace(r.Header.Get("Signature-Agent"), DirectoryPath, "", 1))
			wantVerdict(t, s.v.Verify(r), Invalid, "does not verify")
		})
	}
}

// TestVerifyHandBuilt feeds signatures no Signer makes: each must be
// refused before any key is looked up, with its reason.
func TestVerifyHandBuilt(t *testing.T) {
	s := newVerifySetup(t, []Key{seedKey(t, 3)})
	sg := s.signer(t, forms[0])
	now := s.clock.Now()
	good := signed(t, sg, "https://shop.example/", now)
	sigField := good.Header.Get("Signature")
	label, _, _ := strings.Cut(sigField, "=")
	agent := good.Header.Get("Signature-Agent")
	kid := s.keys[0].Thumbprint()
	params := func(created, expires int64, more string) string {
		return ";created=" + itoa(created) + ";expires=" + itoa(expires) + `;keyid="` + kid + `";nonce="n1";tag="web-bot-auth"` + more
	}
	c := now.Unix()
	for _, tc := range []struct {
		name, input, reason string
		want                Verdict
	}{
		{"covers nothing", label + "=()" + params(c, c+60, ""), "covers nothing", Invalid},
		{"no authority", label + `=("signature-agent")` + params(c, c+60, ""), `"@authority" not covered`, Invalid},
		{"agent uncovered", label + `=("@authority")` + params(c, c+60, ""), "not covered", Invalid},
		{"other tag", label + `=("@authority" "signature-agent");created=1;expires=2;keyid="k";tag="other"`, "web-bot-auth", Invalid},
		{"rsa", label + `=("@authority" "signature-agent")` + params(c, c+60, `;alg="rsa-pss-sha512"`), "alg", Invalid},
		{"no expires", label + `=("@authority" "signature-agent");created=` + itoa(c) + `;keyid="k";nonce="n";tag="web-bot-auth"`, "required", Invalid},
		{"no nonce", label + `=("@authority" "signature-agent");created=` + itoa(c) + ";expires=" + itoa(c+60) + `;keyid="k";tag="web-bot-auth"`, "nonce", Invalid},
		{"too long", label + `=("@authority" "signature-agent")` + params(c, c+3600, ""), "lifetime", Invalid},
		{"backwards", label + `=("@authority" "signature-agent")` + params(c, c-1, ""), "not after", Invalid},
		{"twice", label + `=("@authority" "@authority" "signature-agent")` + params(c, c+60, ""), "twice", Invalid},
		{"req param", label + `=("@authority";req "signature-agent")` + params(c, c+60, ""), "not supported", Invalid},
		{"query-param", label + `=("@authority" "@query-param";name="a" "signature-agent")` + params(c, c+60, ""), "not supported", Invalid},
		{"key of a String", label + `=("@authority" "signature-agent";key="sig1")` + params(c, c+60, ""), "String", Invalid},
		{"bad input", label + "=(", "Signature-Input", Invalid},
		{"long ago", label + `=("@authority" "signature-agent")` + params(c-600, c-560, ""), "expired", Expired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "https://shop.example/", nil)
			r.Header.Set("Signature-Agent", agent)
			r.Header.Set("Signature-Input", tc.input)
			r.Header.Set("Signature", sigField)
			before := s.fetches.Load()
			wantVerdict(t, s.v.Verify(r), tc.want, tc.reason)
			if s.fetches.Load() != before {
				t.Fatal("a signature refused on its face cost a directory fetch")
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestVerifyUnsignedAndUnknown(t *testing.T) {
	s := newVerifySetup(t, []Key{seedKey(t, 4)})
	wantVerdict(t, s.v.Verify(httptest.NewRequest("GET", "https://shop.example/", nil)), Unsigned, "no Signature")

	// Signed by a key the directory does not list.
	other, err := NewSigner(s.agent, []Key{seedKey(t, 5)}, WithForm(StringForm))
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, s.v.Verify(signed(t, other, "https://shop.example/", s.clock.Now())), Unknown, "no key of")

	// Naming a directory that is not there.
	gone, err := NewSigner("https://127.0.0.1:1"+DirectoryPath, s.keys, WithForm(StringForm))
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, s.v.Verify(signed(t, gone, "https://shop.example/", s.clock.Now())), Unknown, "key directory")

	// A long Signature-Agent: the reason quoting it stays short.
	long, err := NewSigner(s.srv.URL+"/"+strings.Repeat("x", 8000), s.keys, WithForm(StringForm))
	if err != nil {
		t.Fatal(err)
	}
	res := s.v.Verify(signed(t, long, "https://shop.example/", s.clock.Now()))
	wantVerdict(t, res, Unknown, "key directory https:")
	if len(res.Reason) > maxReason+3 {
		t.Fatalf("a reason of %d bytes", len(res.Reason))
	}

	// No Signature-Agent at all.
	r := signed(t, s.signer(t, forms[0]), "https://shop.example/", s.clock.Now())
	r.Header.Del("Signature-Agent")
	wantVerdict(t, s.v.Verify(r), Invalid, "absent")

	// A signature that names no directory.
	r = httptest.NewRequest("GET", "https://shop.example/", nil)
	c := s.clock.Now().Unix()
	r.Header.Set("Signature-Input", `sig1=("@authority");created=`+itoa(c)+";expires="+itoa(c+60)+`;keyid="k";nonce="n";tag="web-bot-auth"`)
	r.Header.Set("Signature", "sig1=:"+strings.Repeat("A", 86)+"==:")
	wantVerdict(t, s.v.Verify(r), Unknown, "no Signature-Agent")
}

// TestVerifyDirectoryCache: one fetch serves many requests, concurrent
// ones included, until the directory's max-age passes.
func TestVerifyDirectoryCache(t *testing.T) {
	s := newVerifySetup(t, []Key{seedKey(t, 6)})
	sg := s.signer(t, forms[0])
	done := make(chan Result)
	for i := 0; i < 8; i++ {
		go func() { done <- s.v.Verify(signed(t, sg, "https://shop.example/", s.clock.Now())) }()
	}
	for i := 0; i < 8; i++ {
		wantVerdict(t, <-done, Verified, "")
	}
	if n := s.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for 8 concurrent requests, want 1", n)
	}
	s.clock.Advance(59 * time.Minute)
	wantVerdict(t, s.v.Verify(signed(t, sg, "https://shop.example/", s.clock.Now())), Verified, "")
	if n := s.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches within max-age, want 1", n)
	}
	s.clock.Advance(2 * time.Minute)
	wantVerdict(t, s.v.Verify(signed(t, sg, "https://shop.example/", s.clock.Now())), Verified, "")
	if n := s.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after max-age, want 2", n)
	}
}

// TestVerifyDirectoryChecked: a directory whose response is not signed
// for its own authority, or altered, gives no key.
func TestVerifyDirectoryChecked(t *testing.T) {
	k := seedKey(t, 7)
	evil, err := NewDirectory("https://evil.example"+DirectoryPath, []Key{k})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		handle func(dir *Directory, w http.ResponseWriter, r *http.Request)
		reason string
	}{
		{"signed for another authority", func(_ *Directory, w http.ResponseWriter, r *http.Request) {
			r.Host = "evil.example"
			evil.ServeHTTP(w, r)
		}, "no listed key signed"},
		{"body altered", func(dir *Directory, w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			dir.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			_, _ = w.Write([]byte(strings.Replace(rec.Body.String(), `"keys"`, `"keys" `, 1)))
		}, "Content-Digest"},
		{"unsigned", func(dir *Directory, w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			dir.ServeHTTP(rec, r)
			w.Header().Set("Content-Type", DirectoryMediaType)
			w.Header().Set("Content-Digest", rec.Header().Get("Content-Digest"))
			_, _ = w.Write(rec.Body.Bytes())
		}, "no listed key signed"},
		{"redirected", func(_ *Directory, w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://elsewhere.example"+DirectoryPath, http.StatusFound)
		}, "redirect"},
		{"too big", func(_ *Directory, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", DirectoryMediaType)
			_, _ = w.Write([]byte(`{"keys":[` + strings.Repeat(" ", maxDirectory) + `]}`))
		}, "over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, agent := tlsDirectory(t, []Key{k}, func(d *Directory) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tc.handle(d, w, r) })
			})
			clock := testutil.NewStepClock()
			v, err := NewVerifier(VerifyClient(srv.Client()), VerifyClock(clock.Now))
			if err != nil {
				t.Fatal(err)
			}
			sg, err := NewSigner(agent, []Key{k}, WithForm(StringForm))
			if err != nil {
				t.Fatal(err)
			}
			wantVerdict(t, v.Verify(signed(t, sg, "https://shop.example/", clock.Now())), Unknown, tc.reason)
		})
	}
}

// TestVerifyDefaultClientRefusesLoopback: without VerifyClient, a
// Signature-Agent on a loopback address is not fetched.
func TestVerifyDefaultClientRefusesLoopback(t *testing.T) {
	s := newVerifySetup(t, []Key{seedKey(t, 8)})
	v, err := NewVerifier(VerifyClock(s.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, v.Verify(signed(t, s.signer(t, forms[0]), "https://shop.example/", s.clock.Now())), Unknown, "not public")
	if s.fetches.Load() != 0 {
		t.Fatal("the directory on a loopback address was fetched")
	}
}

func TestVerifierHandler(t *testing.T) {
	s := newVerifySetup(t, []Key{seedKey(t, 9)})
	var got []Result
	site := httptest.NewServer(s.v.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := ResultOf(r)
		if !ok {
			t.Error("no result in the handler's request")
		}
		got = append(got, res)
	})))
	defer site.Close()
	tr, err := NewTransport(http.DefaultTransport, s.signer(t, forms[0], WithClock(s.clock.Now)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*http.Client{{Transport: tr}, site.Client()} {
		resp, err := c.Get(site.URL + "/page")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(got) != 2 || got[0].Verdict != Verified || got[1].Verdict != Unsigned {
		t.Fatalf("results %+v", got)
	}
	if _, ok := ResultOf(httptest.NewRequest("GET", "/", nil)); ok {
		t.Fatal("a result where no handler put one")
	}
}

func TestNewVerifierRefuses(t *testing.T) {
	for _, o := range []VerifyOption{VerifyClock(nil), VerifySkew(-1), VerifySkew(2 * time.Minute),
		VerifyWindow(0), VerifyWindow(MaxWindow + 1), VerifyClient(nil), {}} {
		if _, err := NewVerifier(o); !errors.Is(err, ErrOption) {
			t.Errorf("%s: error %v, want ErrOption", o.name, err)
		}
	}
}

func TestNonceMemoryBounded(t *testing.T) {
	var s nonceSet
	now := time.Unix(1_800_000_000, 0)
	for i := 0; i < 10; i++ {
		if !s.add(nonceKey("d", "k", itoa(int64(i))), now.Add(time.Minute), now, 4) {
			t.Fatalf("nonce %d taken for a replay", i)
		}
	}
	if len(s.until) != 4 || len(s.order) != 4 {
		t.Fatalf("%d nonces remembered, limit 4", len(s.until))
	}
	if s.add(nonceKey("d", "k", "9"), now.Add(time.Minute), now, 4) {
		t.Fatal("a replay of a remembered nonce accepted")
	}
	later := now.Add(2 * time.Minute)
	if !s.add(nonceKey("d", "k", "x"), later.Add(time.Minute), later, 4) || len(s.until) != 1 {
		t.Fatalf("expired nonces kept: %d", len(s.until))
	}
}

func TestDirectoryLifetime(t *testing.T) {
	for _, tc := range []struct {
		cc   []string
		want time.Duration
	}{
		{nil, time.Hour},
		{[]string{"max-age=300"}, 5 * time.Minute},
		{[]string{"public, max-age=999999999"}, 24 * time.Hour},
		{[]string{"max-age=1"}, time.Minute},
		{[]string{"no-store"}, time.Minute},
		{[]string{"max-age=abc"}, time.Minute},
	} {
		if got := lifetime(tc.cc); got != tc.want {
			t.Errorf("lifetime(%q) = %v, want %v", tc.cc, got, tc.want)
		}
	}
}
