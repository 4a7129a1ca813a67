package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/politecrawl/robots/internal/ascii"
)

// addrClass is what an address (or a host) may reach.
type addrClass uint8

const (
	classPublic    addrClass = iota
	classPrivate             // RFC 1918, unique local, shared address space
	classLoopback            // 127.0.0.0/8, ::1, localhost
	classForbidden           // link-local, cloud metadata, unspecified, multicast
)

func (c addrClass) String() string {
	return [...]string{"public", "private", "loopback", "link-local or metadata"}[c]
}

// The addresses and names of cloud metadata services outside the
// link-local ranges, and the names that reach them.
var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("fd00:ec2::254"),   // AWS, IPv6
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	}
	metadataNames = []string{"metadata.google.internal", "metadata.goog", "metadata", "instance-data",
		"instance-data.ec2.internal"}
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	nat64       = netip.MustParsePrefix("64:ff9b::/96")
)

// classOf returns the class of an address.
func classOf(a netip.Addr) addrClass {
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	switch {
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(), a.IsUnspecified(), a.IsMulticast(),
		a.IsInterfaceLocalMulticast(), thisNetwork.Contains(a), a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return classForbidden
	}
	for _, m := range metadataAddrs {
		if a == m {
			return classForbidden
		}
	}
	switch {
	case a.IsLoopback():
		return classLoopback
	case a.IsPrivate(), sharedSpace.Contains(a):
		return classPrivate
	}
	return classPublic
}

// hostClass returns the class of a URL's host (u.Hostname(), lower-case)
// when the host says it: an address, localhost, a metadata name, or a
// name whose last label is a number (an address in a form the resolver
// may read, "2852039166", "0x7f.1"); named is true for any other name,
// whose class only its addresses tell.
func hostClass(host string) (c addrClass, named bool) {
	host = strings.TrimSuffix(host, ".")
	if a, err := netip.ParseAddr(host); err == nil {
		return classOf(a.WithZone("")), false
	}
	for _, m := range metadataNames {
		if host == m || strings.HasSuffix(host, "."+m) {
			return classForbidden, false
		}
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return classLoopback, false
	}
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" || strings.TrimLeft(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return classForbidden, false
	}
	return classPublic, true
}

// docGuard bounds where the documents a page names are fetched from: the
// hosts the crawler may visit ([WithDocumentFilter]), never a link-local
// or cloud-metadata address, and a loopback or private one only when the
// page's own host is of the same class (or is that host).
type docGuard struct {
	allow func(*url.URL) bool
	from  string // the page's host, lower-case

	once      sync.Once
	fromClass addrClass
}

// errRefusedHost wraps every refusal of the guard.
var errRefusedHost = errors.New("not fetched")

// newDocGuard returns the guard of the documents the page at from names;
// a nil from is a page of no host, whose documents are read from public
// hosts only.
func newDocGuard(allow func(*url.URL) bool, from *url.URL) *docGuard {
	g := &docGuard{allow: allow}
	if from != nil {
		g.from = strings.TrimSuffix(strings.ToLower(from.Hostname()), ".")
	}
	return g
}

// lookupTimeout bounds the lookup of the page's host by [docGuard.pageClass].
const lookupTimeout = 3 * time.Second

// pageClass returns the class of the page's host, its first address's for
// a name (public when it does not resolve).
func (g *docGuard) pageClass(ctx context.Context) addrClass {
	g.once.Do(func() {
		if g.from == "" {
			return // public
		}
		c, named := hostClass(g.from)
		if named {
			ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
			defer cancel()
			if addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", g.from); err == nil && len(addrs) > 0 {
				c = classOf(addrs[0])
			}
		}
		g.fromClass = c
	})
	return g.fromClass
}

// checkURL refuses a URL the document (or a redirect hop) may not be
// fetched from, by what the URL says; the address it dials is checked by
// [DialControl].
func (g *docGuard) checkURL(ctx context.Context, u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: not an http(s) URL", errRefusedHost)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	c, _ := hostClass(host)
	if c != classForbidden && g.allow != nil && !g.allow(u) {
		return fmt.Errorf("%w: %s is not a host the crawler may visit", errRefusedHost, bound(u.Host))
	}
	return g.checkClass(ctx, host, c, bound(u.Host))
}

func (g *docGuard) checkClass(ctx context.Context, host string, c addrClass, what string) error {
	switch {
	case c == classForbidden:
		return fmt.Errorf("%w: %s is a link-local or cloud-metadata host", errRefusedHost, what)
	case c == classPublic, host == g.from && host != "":
		return nil
	case c != g.pageClass(ctx):
		page := bound(g.from)
		if page == "" {
			page = "the page"
		}
		return fmt.Errorf("%w: %s is a %s address and %s is not", errRefusedHost, what, c, page)
	}
	return nil
}

// hopGuard is a guard in a hop's context, with the hop's host.
type hopGuard struct {
	g    *docGuard
	host string
}

type hopGuardKey struct{}

// DialControl is a [net.Dialer] ControlContext that refuses the
// connections a document fetch of a [Resolver] ([Resolver.Document]) may
// not make: to a link-local or cloud-metadata address, or to a loopback or
// private one when the page that names the document is not on one of the
// same class. It checks the address the name resolved to, as dialled, so
// that a name resolving to such an address cannot pass. It lets every
// other connection through. The resolver's default client dials with it,
// as the robots plugin's default transport does; give it to the dialer of
// a transport of your own to have the addresses checked there too (the
// URLs of documents are checked whatever the transport).
func DialControl(ctx context.Context, network, address string, _ syscall.RawConn) error {
	h, ok := ctx.Value(hopGuardKey{}).(hopGuard)
	if !ok {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot read the address %s", errRefusedHost, bound(address))
	}
	return h.g.checkClass(ctx, h.host, classOf(ap.Addr().WithZone("")), ap.Addr().String()+" (of "+bound(h.host)+")")
}

// maxQuoted bounds a value of a site (a header, a URL) quoted in an error
// or a reason.
const maxQuoted = 256

// bound returns s cut to maxQuoted bytes.
func bound(s string) string { return ascii.Clip(s, maxQuoted) }

// sameOrigin reports whether target is a URL of from's scheme and host, as
// written, without allocating.
func sameOrigin(from *url.URL, target string) bool {
	if from == nil {
		return false
	}
	rest, ok := strings.CutPrefix(target, from.Scheme)
	if ok {
		rest, ok = strings.CutPrefix(rest, "://")
	}
	if ok {
		rest, ok = strings.CutPrefix(rest, from.Host)
	}
	return ok && from.Host != "" && (rest == "" || rest[0] == '/' || rest[0] == '?' || rest[0] == '#')
}
