package policy

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/internal/gatewait"
)

// FetchInfo describes the latest robots.txt fetch of an authority: what was
// asked, what came back, and how the dialect classified it.
type FetchInfo struct {
	URL       string          // the robots.txt URL asked first
	FinalURL  string          // the URL that answered, after redirects
	Redirects int             // redirect hops followed
	Status    int             // final HTTP status; 0 when there was no answer
	Err       string          // the error when there was no (complete) answer
	Outcome   dialect.Outcome // the dialect's classification
	Time      time.Time       // when the fetch ended
	Bytes     int             // body bytes read (after gzip decoding), at most dialect.MaxBodyBytes+1
	Truncated bool            // the body was longer than dialect.MaxBodyBytes and was cut
	// MaxAge is the Cache-Control max-age of the answer, -1 when it had none
	// (no-cache and no-store read as 0).
	MaxAge time.Duration
	// Warnings name what the fetch could not decode and parsed as it came
	// (a Content-Encoding it does not know, a third compressed layer), or
	// what it converted (a UTF-16 body).
	Warnings []string
}

// answer describes what robots.txt answered, briefly: "503 Service
// Unavailable", "no answer (connection refused)", "more than 5 redirects".
func (f *FetchInfo) answer() string {
	switch f.Outcome {
	case dialect.OutcomeNoAnswer:
		if f.Err == "" {
			return "no answer"
		}
		return "no answer (" + bound(shortError(f.Err)) + ")"
	case dialect.OutcomeRedirectLimit:
		return "more than " + strconv.Itoa(f.Redirects) + " redirects"
	}
	s := statusLine(f.Status)
	if f.Outcome == dialect.OutcomeOtherStatus && f.Status >= 300 && f.Status < 400 {
		s += " without a usable Location"
	}
	return s
}

func statusLine(code int) string {
	if t := http.StatusText(code); t != "" {
		return strconv.Itoa(code) + " " + t
	}
	return "status " + strconv.Itoa(code)
}

// fetchResult is a FetchInfo and the body that came with it.
type fetchResult struct {
	FetchInfo
	body    []byte
	refused bool // a document's guard refused a hop
}

// fetch asks target (robots.txt or another document of the site) with
// the Accept header accept, reads at most limit bytes of its body,
// following at most maxRedirects redirects (to any http(s) authority), and
// classifies the answer. It never fails: a failure is an outcome.
//
// The total timeout counts the time the fetch spends outside a host's gate
// (see [gatewait.Budget]): a robots.txt fetch that waits behind the host's own
// Crawl-delay or Retry-After pause is not read as "no answer".
//
// A document's fetch has a guard g (nil for robots.txt): each hop's URL,
// and the address it dials, must pass it, else the fetch ends with an
// Err that says why and refused set.
func (r *Resolver) fetch(ctx context.Context, target, accept string, limit int64, g *docGuard) fetchResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := gatewait.NewBudget(r.cfg.totalTimeout, cancel)
	defer b.Stop()
	ctx = gatewait.With(ctx, b)
	res := fetchResult{FetchInfo: FetchInfo{URL: target, MaxAge: -1}}
	for target != "" {
		res.FinalURL = target
		target = r.hop(ctx, target, accept, limit, g, &res)
	}
	if b.Spent() && res.Outcome == dialect.OutcomeNoAnswer {
		res.Err = "timeout: no complete answer within " + r.cfg.totalTimeout.String()
	}
	res.Time = r.clock.Now()
	return res
}

// hop asks target once and records the answer in res; it returns the next
// URL when the answer is a redirect to follow, else "".
func (r *Resolver) hop(ctx context.Context, target, accept string, limit int64, g *docGuard, res *fetchResult) (next string) {
	// Each hop has its own context, so that a body the fetch does not use
	// can be cut off without ending the fetch.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		res.Outcome, res.Err = dialect.OutcomeNoAnswer, err.Error()
		return ""
	}
	if g != nil {
		if err := g.checkURL(ctx, req.URL); err != nil {
			res.Outcome, res.Err, res.refused = dialect.OutcomeNoAnswer, err.Error(), true
			return ""
		}
		// The address is checked as dialled, unless a proxy dials it.
		if proxy, _ := http.ProxyFromEnvironment(req); proxy == nil {
			req = req.WithContext(context.WithValue(ctx, hopGuardKey{}, hopGuard{g, strings.TrimSuffix(strings.ToLower(req.URL.Hostname()), ".")}))
		}
	}
	req.Header.Set("User-Agent", r.cfg.userAgent)
	req.Header.Set("Accept", accept)
	// Asking for gzip ourselves turns off the transport's transparent
	// decoding, so that the size limit applies to decoded bytes whatever
	// the transport.
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := r.client.Do(req)
	if err != nil {
		res.Outcome, res.Err = dialect.OutcomeNoAnswer, err.Error()
		if i := strings.Index(res.Err, errRefusedHost.Error()+": "); i >= 0 && errors.Is(err, errRefusedHost) {
			res.Err, res.refused = res.Err[i:], true
		}
		return ""
	}
	res.Status = resp.StatusCode
	if isRedirect(resp.StatusCode) {
		next, ok := redirectTarget(resp)
		discard(resp.Body, cancel)
		if !ok {
			res.Outcome = dialect.ClassifyStatus(resp.StatusCode)
			if bad := resp.Header.Get(unusableLocation); bad != "" {
				res.Err = "Location " + strconv.Quote(bound(bad)) + " cannot be parsed"
			}
			return ""
		}
		if res.Redirects >= r.cfg.dialect.MaxRedirects() {
			res.Outcome = dialect.OutcomeRedirectLimit
			return ""
		}
		res.Redirects++
		return next
	}
	res.Outcome = dialect.ClassifyStatus(resp.StatusCode)
	res.MaxAge = maxAge(resp.Header)
	if res.Outcome != dialect.OutcomeOK && res.Outcome != dialect.OutcomeOther2xx {
		discard(resp.Body, cancel)
		return ""
	}
	body, warnings, err := readBody(resp, limit)
	resp.Body.Close()
	if err != nil {
		res.Outcome, res.Err = dialect.OutcomeNoAnswer, err.Error()
		return ""
	}
	res.body = body
	res.Bytes = len(body)
	res.Truncated = int64(len(body)) > limit
	res.Warnings = warnings
	return ""
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// redirectTarget returns the absolute http(s) URL a redirect points to.
func redirectTarget(resp *http.Response) (string, bool) {
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", false
	}
	u, err := resp.Request.URL.Parse(loc)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), true
}

// Limits of the body of an answer the fetch does not use (a redirect, a
// 4xx, a 5xx): a little of it is read so that the connection can be
// reused, never more than discardBytes and never for longer than
// discardTime; then the hop's request is cancelled, which drops the
// connection.
const (
	discardBytes = 4 << 10
	discardTime  = 100 * time.Millisecond
)

// discard reads at most discardBytes of an unused body within
// discardTime, and closes it; cancel ends the hop's request.
func discard(body io.ReadCloser, cancel context.CancelFunc) {
	t := time.AfterFunc(discardTime, cancel)
	_, _ = io.Copy(io.Discard, io.LimitReader(body, discardBytes))
	t.Stop()
	body.Close()
}

// Content codings of robots.txt bodies: gzip (asked for) and deflate are
// decoded, at most maxLayers deep (a gzip inside a gzip is decoded too);
// others are not decoded and noted as a warning.
const maxLayers = 2

// readBody reads at most limit+1 bytes of the decoded body
// (one more than is parsed, so that the parser sees the cut), and returns
// what it could not decode as warnings: a content coding it does not know,
// a compressed layer deeper than maxLayers. A UTF-16 body with a byte-order
// mark is converted to UTF-8. An error (a gzip or deflate stream that does
// not decode, a connection cut) means no complete answer.
func readBody(resp *http.Response, limit int64) ([]byte, []string, error) {
	var (
		rd       io.Reader = resp.Body
		warnings []string
		layers   int
	)
	for _, coding := range contentCodings(resp.Header) {
		if layers == maxLayers {
			warnings = append(warnings, "Content-Encoding "+coding+" not decoded: more than "+strconv.Itoa(maxLayers)+" layers")
			break
		}
		dec, err := decoder(coding, rd)
		if err != nil {
			return nil, nil, err
		}
		if dec == nil {
			warnings = append(warnings, "Content-Encoding "+strconv.Quote(coding)+" not decoded: the body was parsed as it came")
			break
		}
		rd = dec
		layers++
	}
	br := bufio.NewReader(rd)
	// A gzip stream inside the decoded body (a server that compresses
	// twice, or serves robots.txt.gz as the file) is decoded too, when its
	// header is one: a body that only starts with the magic bytes is
	// parsed as it came.
	for layers < maxLayers && gzipHeader(br) {
		dec, err := decoder("gzip", br)
		if err != nil {
			return nil, nil, err
		}
		br = bufio.NewReader(dec)
		layers++
	}
	// A UTF-16 body is converted as it is read, so that the size limit
	// applies to the UTF-8 text parsed.
	var src io.Reader = br
	if bom, _ := br.Peek(2); len(bom) == 2 && (bom[0] == 0xFE && bom[1] == 0xFF || bom[0] == 0xFF && bom[1] == 0xFE) {
		src = transform.NewReader(br, unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM).NewDecoder())
		warnings = append(warnings, "UTF-16 body converted to UTF-8")
	}
	body, err := io.ReadAll(io.LimitReader(src, limit+1))
	if err != nil {
		return nil, nil, err
	}
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		warnings = append(warnings, "body still gzip-compressed after "+strconv.Itoa(maxLayers)+" layers: parsed as it came")
	}
	return body, warnings, nil
}

// contentCodings returns the codings of a Content-Encoding header, in the
// order they were applied, lower-cased, "identity" left out.
func contentCodings(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			if c != "" && c != "identity" {
				out = append(out, c)
			}
		}
	}
	// Codings are listed in the order applied: decode the last first.
	slices.Reverse(out)
	return out
}

// decoder returns a reader decoding coding from rd, nil for a coding it
// does not know.
func decoder(coding string, rd io.Reader) (io.Reader, error) {
	switch coding {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(rd)
		if err != nil {
			return nil, errors.New("invalid gzip body: " + err.Error())
		}
		return zr, nil
	case "deflate":
		// HTTP's deflate is a zlib stream; some servers send raw deflate.
		br := bufio.NewReader(rd)
		if b, err := br.Peek(2); err == nil && (uint16(b[0])<<8|uint16(b[1]))%31 == 0 && b[0]&0x0f == 8 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, errors.New("invalid deflate body: " + err.Error())
			}
			return zr, nil
		}
		return flate.NewReader(br), nil
	}
	return nil, nil
}

// gzipHeader reports whether br starts with a gzip member header: the
// magic bytes, the deflate method and no reserved flag.
func gzipHeader(br *bufio.Reader) bool {
	h, _ := br.Peek(4)
	return len(h) == 4 && h[0] == 0x1f && h[1] == 0x8b && h[2] == 8 && h[3]&0xE0 == 0
}

// maxAge returns the Cache-Control max-age of a response, -1 if none; a
// no-cache or no-store directive counts as 0.
func maxAge(h http.Header) time.Duration {
	age := time.Duration(-1)
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			d = strings.TrimSpace(d)
			name, val, _ := strings.Cut(d, "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-cache", "no-store":
				return 0
			case "max-age":
				val = strings.Trim(strings.TrimSpace(val), `"`)
				n, err := strconv.ParseInt(val, 10, 64)
				if err != nil || n < 0 {
					continue
				}
				const maxSeconds = int64(1<<63-1) / int64(time.Second)
				if n > maxSeconds {
					n = maxSeconds
				}
				if age < 0 {
					age = time.Duration(n) * time.Second
				}
			}
		}
	}
	return age
}

// shortError names a network error in a few words.
func shortError(s string) string {
	switch {
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "connection reset"):
		return "connection reset"
	case strings.Contains(s, "deadline exceeded"), strings.Contains(s, "Timeout"), strings.Contains(s, "timeout"):
		return "timeout"
	case strings.Contains(s, "unexpected EOF"), strings.HasSuffix(s, ": EOF"):
		return "connection closed early"
	case strings.Contains(s, "no such host"):
		return "no such host"
	case strings.Contains(s, "invalid gzip"):
		return "invalid gzip body"
	}
	return s
}

// defaultClient is the client used when the user gives none: connect,
// response-header and TLS handshake timeouts; the total timeout is applied
// per fetch by the resolver.
func defaultClient(connect, header time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second, ControlContext: DialControl}).DialContext,
		TLSHandshakeTimeout:   connect,
		ResponseHeaderTimeout: header,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   1,
		IdleConnTimeout:       30 * time.Second,
	}
	return &http.Client{Transport: tr}
}

// noFollow returns a copy of c that hands redirects back to the caller, so
// that the resolver counts the hops itself. The user's transport, jar and
// timeout are kept; the transport is wrapped so that a redirect whose
// Location cannot be parsed comes back as a redirect without one (net/http
// would fail the whole request) and is read as "3xx without a usable
// Location".
func noFollow(c *http.Client) *http.Client {
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	next := cc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	cc.Transport = unusableLocationTransport{next}
	return &cc
}

// unusableLocation is the header a redirect's unparseable Location is moved
// to, for the fetch's error text.
const unusableLocation = "X-Robots-Unusable-Location"

type unusableLocationTransport struct{ next http.RoundTripper }

func (t unusableLocationTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || !isRedirect(resp.StatusCode) {
		return resp, err
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if _, perr := req.URL.Parse(loc); perr != nil {
			resp.Header.Del("Location")
			resp.Header.Set(unusableLocation, loc)
		}
	}
	return resp, nil
}
