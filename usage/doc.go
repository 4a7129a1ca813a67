// Package usage reads what a site allows beyond crawling: what the content
// of a URL may be used for (training AI models, a search index, feeding an
// AI model at answer time), as every carrier states it:
//
//   - robots.txt's Content-Usage and Content-Signal lines (read by package
//     dialect) and its License lines;
//   - the origin's /.well-known/tdmrep.json, tdm-reservation and tdm-policy
//     headers and meta elements (the TDM Reservation Protocol: [ParseTDMRep]);
//   - RSL licences ([ParseRSL]), pointed to by robots.txt License lines,
//     and Link headers and <link> elements typed application/rsl+xml (other
//     licence links are recorded, never fetched); their user and geo terms
//     are matched against the [Who] a crawler declares;
//   - a response's Content-Usage and Content-Signal headers and
//     <meta name="content-signal">;
//   - Robots-Tag, X-Robots-Tag and robots meta elements ([RobotsTag],
//     [XRobotsTag], [MetaRobots]), whose noai refuses AI use.
//
// [Check] answers before the fetch and [CheckResponse] after it, with a
// [Report]: the preference in force per purpose and every [Signal] seen,
// each with its [Carrier], where it was stated and the value as written:
// the evidence an operator keeps. It marshals to JSON with names.
// [Report.Refusal] gives the signal that refuses a declared purpose. The
// documents are fetched through a [policy.Resolver], once each.
//
// With the Colly plugin, a crawler declares its purposes in one option,
// keeps what it may use, and with a [Log] keeps the evidence: one JSON line
// per URL decided (fetched, refused, stopped or failed), chained to the
// line before and signed with the crawler's Web Bot Auth key (key, a
// botauth.Key), that [VerifyLog] or robotstxt evidence verify checks later:
//
//	l, err := usage.OpenLog("usage.log", usage.LogConfig{Key: key.CryptoSigner(), KeyID: key.Thumbprint()})
//	if err != nil {
//		return err
//	}
//	defer l.Close()
//	robots.Attach(c, robots.WithUsage(usage.Config{Purposes: []string{"train-ai", "search"}, Log: l}))
//	c.OnResponse(func(r *colly.Response) {
//		if u, _ := robots.UsageOf(r); u.Refused == "" {
//			keep(r) // no declared purpose refused
//		}
//	})
//
// docs/usage.md has each carrier's reading, the JSON schema and the log's
// format.
package usage
