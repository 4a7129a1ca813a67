package robots

import (
	"context"
	"io"
	"net/http"
	"reflect"
	"time"
)

// The client's timeout: Colly's http.Client gives each request a
// deadline (its request timeout) that runs while the request waits at the
// host's gate. A request let through in OnRequest waits at the gate on its
// collector's Context instead, and is sent with what was left of the
// timeout when it came to the gate (gateContext, freshDeadline): the gate
// spaces requests, and that wait is not the server's slowness.

// sameContext compares two contexts without the panic == gives on an
// incomparable dynamic type.
func sameContext(a, b context.Context) bool {
	if t := reflect.TypeOf(a); t != reflect.TypeOf(b) || !t.Comparable() {
		return false
	}
	return a == b
}

// gateContext returns the context req waits at the gate on, and, when that
// is not req's own (its deadline is the client's timeout), the context to
// derive its send from and the timeout's length left at entry. user is the
// Context of req's collector at its latest OnRequest, nil when unknown.
func gateContext(req *http.Request, user context.Context) (gate, base context.Context, budget time.Duration) {
	ctx := req.Context()
	dl, ok := ctx.Deadline()
	if !ok || user == nil {
		return ctx, nil, 0
	}
	if udl, uok := user.Deadline(); uok && !dl.Before(udl) {
		return ctx, nil, 0 // the user's deadline
	}
	return user, user, time.Until(dl)
}

// freshDeadline returns req to send once the gate let it through after
// waiting since entry: req itself if it waited less than a millisecond or
// its deadline is the user's (base nil), else a copy whose deadline is
// budget from now, with the cancel to call once the response's body is
// closed (nil when req is returned). The copy's context ends with base's
// and keeps the values of req's (a challenge's answer is marked there for
// the signer, WithSigner).
func freshDeadline(req *http.Request, base context.Context, budget time.Duration, entry time.Time, retry bool) (*http.Request, context.CancelFunc) {
	if base == nil || !retry && time.Since(entry) < time.Millisecond {
		return req, nil
	}
	dl := time.Now().Add(budget)
	if bdl, ok := base.Deadline(); ok && bdl.Before(dl) {
		dl = bdl
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(req.Context()), dl)
	stop := context.AfterFunc(base, cancel)
	r := req.WithContext(ctx)
	r.Cancel = nil //lint:ignore SA1019 net/http sets it, and closes it at the client's deadline
	return r, func() { stop(); cancel() }
}

// cancelOnClose wraps body so that cancel is called once it is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
