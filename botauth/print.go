package botauth

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
)

// A Key, a Signer, a Directory and a Transport (and pointers to them) print without
// their private keys: through fmt, whatever the verb and flags, and through
// log/slog, they show key IDs (thumbprints), bounds and URLs only. Their
// methods have value receivers so that a value and a pointer print alike
// (fmt prints <nil> for a nil pointer).

// String describes k by its ID and bounds, never its private key.
func (k Key) String() string {
	var b strings.Builder
	b.WriteString("botauth.Key(")
	if k.priv == nil {
		b.WriteString("zero")
	} else {
		b.WriteString(k.kid)
	}
	if !k.NotBefore.IsZero() {
		b.WriteString(" from " + k.NotBefore.UTC().Format(time.RFC3339))
	}
	if !k.Expires.IsZero() {
		b.WriteString(" until " + k.Expires.UTC().Format(time.RFC3339))
	}
	b.WriteByte(')')
	return b.String()
}

// Format prints [Key.String] for every verb, so that no verb nor flag
// (%v, %+v, %#v, %x, %d...) reaches the private key.
func (k Key) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, k.String()) }

// LogValue is k's ID and bounds.
func (k Key) LogValue() slog.Value {
	as := []slog.Attr{slog.String("keyid", k.kid)}
	if !k.NotBefore.IsZero() {
		as = append(as, slog.Time("not_before", k.NotBefore))
	}
	if !k.Expires.IsZero() {
		as = append(as, slog.Time("expires", k.Expires))
	}
	return slog.GroupValue(as...)
}

// String describes s by its Signature-Agent, form and key IDs.
func (s Signer) String() string {
	return "botauth.Signer(" + s.agent + " " + s.form.String() + " keys " + keyIDs(s.keys) + ")"
}

// Format prints [Signer.String] for every verb.
func (s Signer) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// LogValue is s's Signature-Agent, form and key IDs.
func (s Signer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("agent", s.agent), slog.String("form", s.form.String()),
		slog.String("keyids", keyIDs(s.keys)))
}

// String describes d by its URL and key IDs.
func (d Directory) String() string {
	return "botauth.Directory(" + d.url + " keys " + keyIDs(d.keys) + ")"
}

// Format prints [Directory.String] for every verb.
func (d Directory) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, d.String()) }

// LogValue is d's URL and key IDs.
func (d Directory) LogValue() slog.Value {
	return slog.GroupValue(slog.String("url", d.url), slog.String("keyids", keyIDs(d.keys)))
}

// String describes t by its signer.
func (t Transport) String() string {
	if t.signer == nil {
		return "botauth.Transport(nil)"
	}
	return "botauth.Transport(" + t.signer.String() + ")"
}

// Format prints [Transport.String] for every verb.
func (t Transport) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, t.String()) }

// LogValue is t's signer.
func (t Transport) LogValue() slog.Value { return slog.StringValue(t.String()) }

func (a answerer) Format(f fmt.State, _ rune) {
	_, _ = io.WriteString(f, "botauth.Answering("+a.t.String()+")")
}

// keyIDs is the IDs of keys, comma-separated.
func keyIDs(keys []Key) string {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.kid
	}
	return strings.Join(ids, ",")
}

// maxQuoted bounds what an error quotes of a peer's value.
const maxQuoted = 64

// quoted is v as %q would print it, cut to its first maxQuoted bytes
// (followed by "…") when longer: an error quoting what a peer sent stays
// short whatever it sent.
func quoted(v any) string {
	s, ok := v.(string)
	if !ok {
		s = fmt.Sprint(v)
	}
	if len(s) <= maxQuoted {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…", s[:maxQuoted])
}
