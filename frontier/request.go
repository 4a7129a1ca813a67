package frontier

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

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
// set to id; every other field is kept as it is. b is not modified.
//
// Why the JSON is edited: Colly's queue.Storage hands a storage only the
// bytes of colly.Request.Marshal, and no public hook runs between GetRequest
// and the request's callbacks, so the lease can only ride in its Ctx field.
//
// The usual case costs one copy of b: the pair is written at the end of the
// top-level Ctx object, where it wins over a LeaseKey already there (a
// request queued again from a handed-out one's context), since a JSON
// object read into a map keeps the last of equal keys. Bytes that are not
// an object with a Ctx object or null, or an id JSON would escape, are
// decoded and encoded again.
func SetLease(b []byte, id string) ([]byte, error) {
	if out, ok := spliceLease(b, id); ok {
		return out, nil
	}
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

// spliceLease is SetLease's usual case: b a JSON object with one top-level
// "Ctx" member, an object or null, and id plain ASCII. ok is false for
// anything else. b is valid JSON (AddRequest decoded it), so the scan only
// finds the bounds of values, it does not validate them.
func spliceLease(b []byte, id string) (out []byte, ok bool) {
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return nil, false
		}
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = skipSpace(b, i+1)
	at, end := -1, -1 // the Ctx value's bounds
	for i < len(b) && b[i] != '}' {
		k0 := i
		if b[k0] != '"' {
			return nil, false
		}
		k1 := skipValue(b, i)
		if k1 < 0 {
			return nil, false
		}
		i = skipSpace(b, k1)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		v1 := skipValue(b, i)
		if v1 < 0 {
			return nil, false
		}
		if string(b[k0:k1]) == `"Ctx"` {
			if at >= 0 {
				return nil, false // twice: leave it to encoding/json
			}
			at, end = i, v1
		}
		i = skipSpace(b, v1)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	if i >= len(b) || at < 0 || skipSpace(b, i+1) != len(b) {
		return nil, false
	}
	const open = `"` + LeaseKey + `":"`
	switch {
	case string(b[at:end]) == "null":
		out = make([]byte, 0, len(b)+len(open)+len(id)+1)
		out = append(out, b[:at]...)
		out = append(out, '{')
		out = append(out, open...)
		out = append(out, id...)
		out = append(out, '"', '}')
		return append(out, b[end:]...), true
	case b[at] == '{':
		closing := end - 1 // the object's '}'
		out = make([]byte, 0, len(b)+len(open)+len(id)+2)
		out = append(out, b[:closing]...)
		if skipSpace(b, at+1) != closing {
			out = append(out, ',')
		}
		out = append(out, open...)
		out = append(out, id...)
		out = append(out, '"')
		return append(out, b[closing:]...), true
	}
	return nil, false
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value at b[i:], -1 when
// it does not end.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				k := skipValue(b, j)
				if k < 0 {
					return -1
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
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

// Postponer is an optional interface of a [Completer] that is also a
// [Requeuer] whose Requeues is true: Postpone takes back the request it
// handed out under lease, not sent, to hand it out again once its host
// may be asked and not before until, and reports whether it did. The
// plugin calls it instead of tying a queue thread to a wait for the
// host's turn that the frontier could not foresee (the host's robots.txt
// was fetched for the request); the thread then takes another host's
// request. A postponed request is
// neither done nor lost: its lease ends and it is queued again ahead of
// its host's other requests. On false (an unknown lease, a store that
// cannot be reached) the caller goes on with the request.
type Postponer interface {
	Postpone(lease string, until time.Time) bool
}
