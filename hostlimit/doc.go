// Package hostlimit spaces the requests a crawler sends to each host. A
// [Limiter] keeps, per host, a delay and the instants of the host's latest
// requests, and lets a request through (Wait, Acquire, Transport) only once
// the delay since the previous one has passed and no pause (a 429 or 5xx
// answer, see [BackoffStatus]) is in force.
//
// By default ([EndToStart]) a host gets at most one
// request in flight while its delay is above zero, and the next request is
// let through no earlier than the delay after the previous one ended; the
// host never sees two requests closer than the delay. [StartToStart]
// spaces the sends instead and lets requests overlap. A 429 or 5xx
// response pauses the host until its Retry-After, or with exponential
// backoff. The guarantee holds between the actual events, read from the
// monotonic clock when they happen, with zero tolerance, however many
// goroutines use the host; raising a delay applies at once, also to callers
// already waiting.
//
// A request takes two steps. [Limiter.Wait] is an early wait that holds
// nothing (for a place where waiting must not hold a slot, such as Colly's
// OnRequest); [Limiter.Acquire] is the binding gate right before the send,
// and returns a [Permit] that the request marks sent, shows its response
// and releases when it is over. [Limiter.Transport] does all of it for an
// http.Client. Idle hosts' state is dropped by a lazy sweep. A Limiter
// starts no goroutines and knows nothing of robots.txt: the delay is the
// caller's (Crawl-delay, a minimum, a multiple of response time).
//
// # Why not golang.org/x/time/rate
//
// A rate.Limiter is a token bucket, the right model for a crawler-wide
// rate cap but not for one host's Crawl-delay:
//
//   - It books scheduled times, not actual sends: Wait returns at the
//     booked time, and a goroutine that is descheduled, or a request that
//     waits for a connection, sends later while the next one still leaves
//     on schedule, so real gaps come out shorter than the limit.
//   - It cannot express end-to-start spacing: it never learns when a
//     response ended, so a slow response eats into the next gap.
//   - A new limit does not move callers already waiting: SetLimit after
//     their reservations leaves them on the old schedule.
//
// The repository's docs/performance.md gives the measured figures.
package hostlimit
