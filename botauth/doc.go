// Package botauth signs and verifies a crawler's requests with Web Bot Auth
// (draft-ietf-webbotauth-httpsig-protocol-01): RFC 9421 HTTP Message
// Signatures made with an Ed25519 key whose public half the crawler
// publishes in a key directory, so that a site can tell the crawler's
// requests from anyone else's who copies its User-Agent.
//
// The model: a crawler has one or more [Key]s (several while it rotates)
// and a key directory at an https URL, its Signature-Agent. A [Signer]
// signs a request with the newest key in force: the signature covers the
// request's "@authority" and the crawler's Signature-Agent, optionally
// "@method", "@path" and "@query" ([Cover]), with created (5 seconds before
// the signing instant by default, [WithSkew], so that a verifier whose
// clock is a little behind does not see it in the future), expires (a
// minute after created by default, [WithWindow]), keyid (the key's RFC 7638
// thumbprint), alg, a fresh nonce and tag "web-bot-auth". A signature is
// good for any request to that authority until it expires, so every
// request must be signed when it is sent: a [Transport] does that for an
// http.Client, once per redirect hop and per retry; [Signer.Sign] serves
// callers without a transport. The [Directory] handler serves the JWK Set
// of the keys at the directory's URL, signed as the draft recommends, for
// its own authority only.
//
// The Signature-Agent has two forms ([Form]), and deployed verifiers
// accept one or the other. The default, [StringForm], is the one
// Cloudflare's verifiers accept: Signature-Agent: "https://...", covered
// as "signature-agent", no covered component carrying a parameter.
// [DictionaryForm] is the working group's: Signature-Agent:
// sig1="https://...", covered as "signature-agent";key="sig1".
//
// A [Card] is the crawler's Signature Agent Card, the JSON document
// registries read.
//
// A site may ask for a signature with a 401, 403 or 429 answer carrying
// Accept-Signature. [Transport.Answering] answers such a challenge once,
// with the components and parameters it asks for when they can be signed
// honestly; with [OnlyWhenChallenged] a transport signs nothing else.
//
// A site checks signed requests with a [Verifier] (its [Verifier.Handler]
// middleware, or [Verifier.Verify]): it reads either form, fetches and
// caches the key directory, and gives a [Verdict] with its reason. A
// crawler operator can point a crawl at one to check their setup.
//
// Time is a parameter: Sign takes the signing instant, and the clock the
// transport and the directory read is set with [WithClock].
//
// RFC 9421's published Ed25519 test key is refused by [NewSigner] and
// [NewDirectory] unless [AllowTestKey] is given, which is for tests only.
package botauth
