package usage

import (
	"context"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"weak"

	"github.com/politecrawl/robots/policy"
)

// licenseMemo holds, per policy, the licences its robots.txt points to as
// a check considers them ([policyLicenses]): read once, however many URLs
// of the site are checked. An entry goes with its policy.
var licenseMemo sync.Map // weak.Pointer[policy.Policy] → []pointer

// policyLicenses returns the License lines of pol's robots.txt that apply
// to the crawler and that a check considers, resolved against the URL
// robots.txt was fetched from (a value that is not an absolute http(s) URL
// after that is skipped): the first MaxLicenses+1 distinct URLs (one past
// the limit is enough to refuse as too many), the last one's pointer
// saying how many more distinct URLs were not read.
func policyLicenses(pol *policy.Policy) []pointer {
	k := weak.Make(pol)
	if v, ok := licenseMemo.Load(k); ok {
		return v.([]pointer)
	}
	rules := pol.Rules()
	base, err := url.Parse(pol.Fetch().FinalURL)
	if rules == nil || err != nil {
		return nil
	}
	var out []pointer
	seen := map[string]bool{}
	more := 0
	for _, l := range rules.Licenses() {
		lu := resolve(base, l.URL)
		switch {
		case lu == "" || seen[lu]:
		case len(out) > MaxLicenses:
			more++
		default:
			out = append(out, pointer{url: lu, from: "robots.txt line " + strconv.Itoa(l.Line), rsl: true})
		}
		seen[lu] = true
	}
	if more > 0 {
		out[MaxLicenses].from += " (and " + strconv.Itoa(more) + " more licences, not read)"
	}
	out = slices.Clip(out) // shared: a caller's append copies it
	if _, loaded := licenseMemo.LoadOrStore(k, out); !loaded {
		runtime.AddCleanup(pol, func(k weak.Pointer[policy.Policy]) { licenseMemo.Delete(k) }, k)
	}
	return out
}

// fetchLicenses fetches the licences at urls (distinct) together, within
// one budget, the resolver's timeout ([policy.Resolver.Timeout]): a page's
// licences take the time of the slowest, not the sum, even when the host's
// gate lets them through one by one. A licence not read within the budget
// is one that cannot be obtained (its fetch goes on, for the next page).
// docs[i] is urls[i]'s; the only errors are ctx's.
func fetchLicenses(ctx context.Context, res *policy.Resolver, u *url.URL, urls []string) ([]*policy.Document, error) {
	docs := make([]*policy.Document, len(urls))
	if len(urls) == 0 {
		return docs, nil
	}
	bctx, cancel := context.WithTimeout(ctx, res.Timeout())
	defer cancel()
	var wg sync.WaitGroup
	for i, lu := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if docs[i], err = res.Document(bctx, u, lu, rslKind); err != nil {
				docs[i] = &policy.Document{URL: lu, Err: "not read within " + res.Timeout().String()}
			}
		}()
	}
	wg.Wait()
	return docs, ctx.Err()
}
