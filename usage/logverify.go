package usage

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// LogError is the first bad record [VerifyLog] found: its number (the
// log's first line is record 1) and what is wrong with it.
type LogError struct {
	Record int
	Reason string
	Err    error // the key lookup's error, when that is what failed
}

func (e *LogError) Error() string {
	s := "usage: log record " + strconv.Itoa(e.Record) + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *LogError) Unwrap() error { return e.Err }

// LogKeys returns the Ed25519 public key of a key ID, for [VerifyLog].
type LogKeys func(keyid string) (ed25519.PublicKey, error)

// sealed is what VerifyLog reads of a line: the members the log adds.
type sealed struct {
	Prev    *string `json:"prev"`
	KeyID   string  `json:"keyid"`
	Sig     *string `json:"sig"`
	Outcome string  `json:"outcome"`
}

// VerifyLog reads a usage log from r and checks, line by line, that each
// is a JSON object whose prev is the SHA-256 of the line before ("" for
// the first), that each is signed by the key keys gives for its keyid
// over its bytes before `,"sig":`, and that the last record is the
// [Closed] one that [Log.Close] writes. With keys nil the log must be
// unsigned; with keys, every record must be signed. It returns how many
// records the log holds, and for the first bad one a *[LogError] naming
// it: a record changed, removed or moved fails there or, in an unsigned
// log, at the next record.
func VerifyLog(r io.Reader, keys LogKeys) (int, error) {
	prev := ""
	last := ""
	pubs := map[string]ed25519.PublicKey{}
	n, err := readLines(r, func(n int, line []byte) error {
		bad := func(format string, args ...any) error {
			return &LogError{Record: n, Reason: fmt.Sprintf(format, args...)}
		}
		var s sealed
		if err := json.Unmarshal(line, &s); err != nil || len(line) == 0 || line[0] != '{' {
			return bad("not a JSON object")
		}
		switch {
		case s.Sig != nil && keys == nil:
			return bad("signed by key %q: give its key to check it", s.KeyID)
		case s.Sig == nil && keys != nil:
			return bad("not signed")
		case s.Sig != nil:
			tail := `,"sig":"` + *s.Sig + `"}`
			if !bytes.HasSuffix(line, []byte(tail)) {
				return bad(`"sig" is not its last member`)
			}
			sig, err := base64.RawURLEncoding.DecodeString(*s.Sig)
			if err != nil || len(sig) != ed25519.SignatureSize {
				return bad("its signature is not a base64url Ed25519 signature")
			}
			pub, ok := pubs[s.KeyID]
			if !ok {
				if pub, err = keys(s.KeyID); err != nil {
					return &LogError{Record: n, Reason: fmt.Sprintf("key %q", s.KeyID), Err: err}
				}
				pubs[s.KeyID] = pub
			}
			if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, line[:len(line)-len(tail)], sig) {
				return bad("its signature does not verify with key %q (changed, or signed by another key)", s.KeyID)
			}
		}
		switch {
		case s.Prev == nil:
			return bad(`no "prev" member`)
		case *s.Prev != prev && n == 1:
			return bad("the log's first record chains to another (prev %q): records before it are missing", *s.Prev)
		case *s.Prev != prev:
			return bad("does not chain to record %d (one of the two was changed, or a record removed or moved)", n-1)
		}
		prev, last = lineHash(line), s.Outcome
		return nil
	})
	if err != nil {
		return n, err
	}
	if n == 0 {
		return 0, &LogError{Record: 1, Reason: "missing: the log is empty"}
	}
	if last != Closed {
		return n, &LogError{Record: n + 1, Reason: "missing: the log ends without its closing record (cut short, or its writer was not closed)"}
	}
	return n, nil
}
