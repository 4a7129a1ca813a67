package robots

import (
	"net/http"
	"reflect"
	"unsafe"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/storage"
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
