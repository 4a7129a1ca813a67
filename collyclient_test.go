package robots

import (
	"net/http"
	"testing"

	"github.com/gocolly/colly/v2"
)

// The plugin can read a collector's transport: if Colly's layout changes,
// this fails before any user sees a proxy silently dropped.
func TestCollyTransportIsReadable(t *testing.T) {
	c := colly.NewCollector()
	if tr, ok := collyTransport(c); !ok || tr != nil {
		t.Fatalf("a new collector: transport %T, readable %v; want nil (http.DefaultTransport), true", tr, ok)
	}
	mine := &http.Transport{}
	c.WithTransport(mine)
	if tr, _ := collyTransport(c); tr != mine {
		t.Fatalf("after WithTransport: %T", tr)
	}
	c.SetProxyFunc(http.ProxyFromEnvironment) // sets Proxy on mine in place
	if tr, _ := collyTransport(c); tr != mine || mine.Proxy == nil {
		t.Fatalf("after SetProxyFunc: %T", tr)
	}
	cl := &http.Client{}
	c.SetClient(cl)
	if collyClient(c) != cl {
		t.Fatal("SetClient not seen")
	}
}
