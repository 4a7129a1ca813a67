package frontier

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/politecrawl/robots/internal/authority"
)

// LeaseKey is the key, in a handed-out request's colly.Context, of its
// lease id (a string), which robots.AttachFrontier's callbacks pass to
// Done.
const LeaseKey = "robots.frontier.lease"

// maxRequestBytes caps the size of one serialised request (AddRequest
// refuses larger ones).
const maxRequestBytes = 1 << 20

// ErrBadRequest is wrapped by the error of AddRequest for bytes that are
// not a request serialised by Colly with an absolute URL, or longer than
// 1 MiB.
var ErrBadRequest = errors.New("frontier: not a serialised Colly request")

// Request is what a frontier reads of a serialised Colly request.
type Request struct {
	URL  string // as serialised
	Host string // the authority its limiter keys it by ("https://example.com"); for other URLs, scheme://host
	Key  string // what makes it the same request: method, URL, and a hash of the body if any
}

// wire is the part of colly's serialised request the frontier reads. A
// queue.Storage receives requests only as the JSON of colly.Request.Marshal
// and Colly has no public decoder for it (Collector.UnmarshalRequest needs a
// collector), so the frontier reads those three fields itself.
type wire struct {
	URL    string
	Method string
	Body   []byte
}

// Decode reads a request serialised by colly.Request.Marshal (at most
// 1 MiB; an error wrapping [ErrBadRequest] otherwise).
func Decode(b []byte) (Request, error) {
	if len(b) > maxRequestBytes {
		return Request{}, fmt.Errorf("%w: %d bytes, more than %d", ErrBadRequest, len(b), maxRequestBytes)
	}
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return Request{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	u, err := url.Parse(w.URL)
	if err != nil {
		return Request{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if !u.IsAbs() || u.Host == "" {
		return Request{}, fmt.Errorf("%w: URL %q is not absolute", ErrBadRequest, w.URL)
	}
	host, err := authority.String(u)
	if err != nil {
		host = strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
	}
	method := strings.ToUpper(w.Method)
	if method == "" {
		method = "GET"
	}
	key := method + " " + w.URL
	if len(w.Body) > 0 {
		sum := sha256.Sum256(w.Body)
		key += " " + hex.EncodeToString(sum[:12])
	}
	return Request{URL: w.URL, Host: host, Key: key}, nil
}

// SetLease returns the serialised request b with its context's LeaseKey
// set to id; every other field is kept as it is.
//
// Why the JSON is edited: Colly's queue.Storage hands a storage only the
// bytes of colly.Request.Marshal, and no public hook runs between GetRequest
// and the request's callbacks, so the lease can only ride in its Ctx field.
func SetLease(b []byte, id string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	var ctx map[string]json.RawMessage
	if raw, ok := m["Ctx"]; ok {
		if err := json.Unmarshal(raw, &ctx); err != nil {
			return nil, fmt.Errorf("%w: Ctx: %w", ErrBadRequest, err)
		}
	}
	if ctx == nil {
		ctx = map[string]json.RawMessage{}
	}
	v, _ := json.Marshal(id)
	ctx[LeaseKey] = v
	raw, err := json.Marshal(ctx)
	if err != nil {
		return nil, err
	}
	m["Ctx"] = raw
	return json.Marshal(m)
}

// Completer is what robots.AttachFrontier reports done requests to: a
// [Frontier], or the fleet's frontier on Redis.
type Completer interface {
	Done(lease string)
}

// Requeuer is an optional interface of a [Completer]: Requeues reports
// whether the frontier may hand a request it handed out before to the same
// process again (after a lease ended, or after its shared store lost its
// data). Colly's own visited check must then be off: robots.AttachFrontier
// sets the collector's AllowURLRevisit.
type Requeuer interface {
	Requeues() bool
}
