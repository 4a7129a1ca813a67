package robots

import (
	"net/http"
	"reflect"
	"unsafe"

	"github.com/gocolly/colly/v2"
)

// Colly keeps a collector's http.Client in an unexported backend with no
// getter, and SetProxy, SetProxyFunc, WithTransport and SetClient replace
// its transport without a word. The plugin reads it, to adopt a transport
// the user set (a proxy) and to tell its own transport from another
// plugin's. The offsets are found once by reflection; if Colly's layout
// ever changes so that they cannot be, clientOffsets.ok is false and the
// plugin says so at Attach.
var clientOffsets = func() (o struct {
	backend, client uintptr
	ok              bool
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
	o.backend, o.client, o.ok = bf.Offset, cf.Offset, true
	return o
}()

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
