package robots

import (
	"hash/fnv"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/storage"
	whatwg "github.com/nlnwa/whatwg-url/url"
)

// Colly keeps a collector's http.Client in an unexported backend with no
// getter, and SetProxy, SetProxyFunc, WithTransport and SetClient replace
// its transport without a word. The plugin reads it, to adopt a transport
// the user set (a proxy) and to tell its own transport from another
// plugin's. It reads the collector's visited store the same way (no
// getter either), to put it behind a store of its own with the public
// SetStorage (see visits). The offsets are found once by reflection; if
// Colly's layout ever changes so that they cannot be, clientOffsets.ok is
// false and the plugin says so at Attach.
var clientOffsets = func() (o struct {
	backend, client, store uintptr
	ok                     bool
}) {
	ct := reflect.TypeOf(colly.Collector{})
	bf, ok := ct.FieldByName("backend")
	if !ok || bf.Type.Kind() != reflect.Pointer || bf.Type.Elem().Kind() != reflect.Struct {
		return o
	}
	cf, ok := bf.Type.Elem().FieldByName("Client")
	if !ok || cf.Type != reflect.TypeOf((*http.Client)(nil)) {
		return o
	}
	sf, ok := ct.FieldByName("store")
	if !ok || sf.Type != reflect.TypeOf((*storage.Storage)(nil)).Elem() {
		return o
	}
	o.backend, o.client, o.store, o.ok = bf.Offset, cf.Offset, sf.Offset, true
	return o
}()

// collyStore returns c's visited store, or nil when it cannot be read.
func collyStore(c *colly.Collector) storage.Storage {
	if !clientOffsets.ok || c == nil {
		return nil
	}
	return *(*storage.Storage)(unsafe.Add(unsafe.Pointer(c), clientOffsets.store))
}

// collyClient returns c's http.Client, or nil when it cannot be read.
func collyClient(c *colly.Collector) *http.Client {
	if !clientOffsets.ok || c == nil {
		return nil
	}
	backend := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(c), clientOffsets.backend))
	if backend == nil {
		return nil
	}
	return *(**http.Client)(unsafe.Add(backend, clientOffsets.client))
}

// collyTransport returns c's transport as Colly would use it (nil means
// http.DefaultTransport), and false when it cannot be read.
func collyTransport(c *colly.Collector) (http.RoundTripper, bool) {
	cl := collyClient(c)
	if cl == nil {
		return nil, false
	}
	return cl.Transport, true
}

// maxForgotten bounds the visited marks a collector's visits forgets.
const maxForgotten = 100_000

// visits is the visited store the plugin puts in front of a collector's
// own when it is attached (Colly's public SetStorage). Colly marks a URL
// visited before any OnRequest callback runs, so a link the plugin stops
// as nofollow would stay "already visited"; visits forgets that mark, so
// that the URL is fetched when a page without the directive links it or
// when it is given to c.Visit. Everything else goes to the collector's
// store. A store set with SetStorage after Attach is used as it is: a
// nofollow stop then leaves its URL visited.
type visits struct {
	storage.Storage
	mu     sync.Mutex
	forgot map[uint64]struct{} // Colly's request hashes of the marks forgotten
}

// wrapVisits puts c's visited store behind a visits, keeping c's cookie
// jar (SetStorage makes a new one), and returns it; nil when c's store
// cannot be read. A clone of an attached collector shares its visits.
func wrapVisits(c *colly.Collector) *visits {
	s := collyStore(c)
	cl := collyClient(c)
	if s == nil || cl == nil {
		return nil
	}
	if v, ok := s.(*visits); ok {
		return v
	}
	v := &visits{Storage: s, forgot: map[uint64]struct{}{}}
	jar := cl.Jar
	if err := c.SetStorage(v); err != nil {
		return nil
	}
	c.SetCookieJar(jar)
	return v
}

// IsVisited is the collector's store's answer, false for a forgotten mark.
func (v *visits) IsVisited(id uint64) (bool, error) {
	v.mu.Lock()
	_, forgot := v.forgot[id]
	v.mu.Unlock()
	if forgot {
		return false, nil
	}
	return v.Storage.IsVisited(id)
}

// Visited marks id visited again.
func (v *visits) Visited(id uint64) error {
	v.mu.Lock()
	delete(v.forgot, id)
	v.mu.Unlock()
	return v.Storage.Visited(id)
}

// forget forgets the visited mark of r, a GET Colly marked before the
// plugin stopped it. A nil visits does nothing.
func (v *visits) forget(r *colly.Request) {
	if v == nil || r.Method != http.MethodGet {
		return
	}
	id := visitHash(r.URL.String())
	v.mu.Lock()
	if len(v.forgot) < maxForgotten {
		v.forgot[id] = struct{}{}
	}
	v.mu.Unlock()
}

// collyURLs parses URLs as Colly does before it hashes them.
var collyURLs = whatwg.NewParser(whatwg.WithPercentEncodeSinglePercentSign())

// visitHash is the key under which Colly marks a GET of u visited: FNV-1a
// of the URL as its WHATWG parser writes it.
func visitHash(u string) uint64 {
	if p, err := collyURLs.Parse(u); err == nil {
		u = p.String()
	}
	h := fnv.New64a()
	h.Write([]byte(u))
	return h.Sum64()
}

// collyYes reads a COLLY_* boolean as Colly does.
func collyYes(v string) bool {
	switch strings.ToLower(v) {
	case "1", "yes", "true", "y":
		return true
	}
	return false
}
