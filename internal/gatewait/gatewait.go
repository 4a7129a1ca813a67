// Package gatewait lets a request carry a hook that a per-host gate calls
// around the time the request waits for its host's turn. The policy
// package's robots.txt fetch uses it to stop its timeout while it waits
// behind the host's own Crawl-delay or Retry-After pause; hostlimit's
// Transport and the plugin's gate call it.
package gatewait

import "context"

// Hook is told when a request starts and stops waiting at a gate. Calls
// may nest (a redirect hop passes the gate while an earlier one is
// accounted); implementations must be safe for concurrent use.
type Hook interface {
	Pause()
	Resume()
}

type key struct{}

// With returns ctx carrying h.
func With(ctx context.Context, h Hook) context.Context { return context.WithValue(ctx, key{}, h) }

// From returns the hook ctx carries, or nil.
func From(ctx context.Context) Hook {
	h, _ := ctx.Value(key{}).(Hook)
	return h
}
