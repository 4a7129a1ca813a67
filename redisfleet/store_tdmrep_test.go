package redisfleet

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/robots/dialect"
	"github.com/politecrawl/robots/policy"
	"github.com/politecrawl/robots/redisfleet/internal/redistest"
	"github.com/politecrawl/robots/usage"
)

// TestStoreOneTDMRepFetchForTheFleet: eight resolvers on eight fleet
// handles (separate processes' memory caches and clients) that ask for a
// URL's usage for train-ai at once fetch the origin's tdmrep.json once,
// and each is refused by its reservation, naming the file's rule.
func TestStoreOneTDMRepFetchForTheFleet(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var tdm atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Write([]byte("User-agent: *\nAllow: /\n"))
		case "/.well-known/tdmrep.json":
			tdm.Add(1)
			time.Sleep(300 * time.Millisecond) // the others ask while this fetch holds the fleet's lock
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`[{"location": "/reserved/", "tdm-reservation": 1}]`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	u, _ := url.Parse(site.URL + "/reserved/page")

	resolvers := make([]*policy.Resolver, 8)
	for i := range resolvers {
		r, err := policy.NewResolver(policy.WithStore(newFleet(t, srv).Store()), policy.WithAgents("examplebot"))
		if err != nil {
			t.Fatal(err)
		}
		resolvers[i] = r
	}
	reports := make([]usage.Report, len(resolvers))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, r := range resolvers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			rep, err := usage.Check(context.Background(), r, u, dialect.TrainAI)
			if err != nil {
				t.Errorf("resolver %d: %v", i, err)
			}
			reports[i] = rep
		}()
	}
	close(start)
	wg.Wait()
	if n := tdm.Load(); n != 1 {
		t.Fatalf("8 resolvers sharing Redis fetched tdmrep.json %d times, want 1", n)
	}
	for i, rep := range reports {
		s, refused := rep.Refusal([]dialect.Category{dialect.TrainAI}, dialect.UseUnknown, false)
		if !refused || s.Carrier != usage.TDMRepFile {
			t.Errorf("resolver %d: refused=%v by %+v; want the tdmrep.json reservation", i, refused, s)
		}
	}
}
