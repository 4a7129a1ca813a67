package usage

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/politecrawl/robots/policy"
)

// Outcomes of a [LogRecord].
//
// A URL that was answered, whatever the status (Status says which), is
// fetched or refused. A URL that was not answered is stopped, when the
// crawler chose not to send it (Reason says why: robots.txt, a usage term,
// a nofollow page, a Crawl-delay above the largest honoured, the crawl's
// end), or failed, when it was sent and no answer came (Reason is the
// error: the network, a timeout).
const (
	Fetched = "fetched" // answered; its content may be used for every declared purpose
	Refused = "refused" // answered; its content may not be used for a declared purpose
	Stopped = "stopped" // not sent: the crawler stopped it
	Failed  = "failed"  // sent, and no answer came
	Closed  = "closed"  // the log's writer was closed: the last record of a complete log
)

// LogRecord is one line of the usage log.
type LogRecord struct {
	Time    time.Time `json:"time"`
	URL     string    `json:"url,omitempty"`
	Outcome string    `json:"outcome"`
	// Status is the HTTP status of a fetched or refused URL, whatever it
	// is (a 404 or a 503 answer out of retries is fetched).
	Status int `json:"status,omitempty"`
	// Reason says why a URL was stopped, refused or failed.
	Reason string `json:"reason,omitempty"`
	// Purposes are the declared purposes, Use the declared use level.
	Purposes []string `json:"purposes,omitempty"`
	Use      string   `json:"use,omitempty"`
	// Verdicts are the preference in force for each declared purpose
	// ("y", "n", "unknown"; "n/a" for a URL robots.txt disallows) and,
	// under "use", the use level the site states, when one is declared.
	Verdicts map[string]string `json:"verdicts,omitempty"`
	// Signals are every statement the site made about the URL.
	Signals []Signal `json:"signals,omitempty"`
	// Documents are the documents that decided, each with the SHA-256 of
	// its bytes.
	Documents []Document `json:"documents,omitempty"`
}

// Document is a document a site publishes that decided a [LogRecord]:
// its robots.txt, its tdmrep.json, an RSL licence.
type Document struct {
	Kind     string    `json:"kind"` // "robots.txt", "tdmrep.json", "license"
	URL      string    `json:"url"`
	FinalURL string    `json:"final_url,omitempty"` // after redirects, when another
	Status   int       `json:"status"`              // final HTTP status; 0 for no answer
	Fetched  time.Time `json:"fetched"`
	// SHA256 is the hex SHA-256 of the bytes read; "" when there were
	// none. With [LogConfig.Documents], the bytes are kept in the file
	// DIR/sha256/SHA256.
	SHA256 string `json:"sha256,omitempty"`
	// Err says why the document states nothing: what its fetch gave
	// ("404 Not Found"), why it could not be read; for robots.txt, which
	// copy is in force when the latest fetch failed.
	Err string `json:"error,omitempty"`

	src *policy.Document // the fetched document, for LogConfig.Documents
}

// LogConfig says how a [Log] signs its records and where it keeps the
// documents they name. The zero LogConfig writes an unsigned log and keeps
// no document.
type LogConfig struct {
	// Key signs each record when not nil; its public key must be Ed25519.
	Key crypto.Signer
	// KeyID is the key's ID, written in each signed record (for a Web Bot
	// Auth key, its JWK thumbprint). Required with Key.
	KeyID string
	// Documents, when not "", is a directory where the bytes of every
	// document a record names are kept, content-addressed:
	// Documents/sha256/HEX, HEX the document's SHA-256.
	Documents string
}

// Log appends chained, optionally signed, records to a usage log. It is
// safe for concurrent use.
//
// A usage log is a file of JSON lines, one [LogRecord] per URL a crawl
// decided, that an operator keeps to show later what each site stated.
// Each line is the record's JSON object with, as its last members:
//
//	"prev":  the SHA-256 (hex) of the previous line's bytes, its newline
//	         excluded; "" on the log's first line
//	"keyid": the signing key's ID (signed logs only)
//	"sig":   the Ed25519 signature (base64url, no padding) of the line's
//	         bytes before `,"sig":` (signed logs only)
//
// so that the chain and the signatures are checked on the bytes as written
// ([VerifyLog]), whatever a JSON library does with them. [Log.Close] ends
// the log with a record whose outcome is "closed": a log cut after any
// record then fails to verify.
type Log struct {
	mu    sync.Mutex
	w     io.Writer
	c     io.Closer // the file OpenLog opened; nil for NewLog
	cfg   LogConfig
	prev  string       // hex SHA-256 of the last line written
	buf   bytes.Buffer // the record as the encoder writes it
	line  []byte       // the line written
	enc   *json.Encoder
	kept  map[string]bool // documents already in cfg.Documents
	err   error           // the first write error: the log takes no more
	ended bool
}

// maxLine bounds a log line, for the reader: a record names a few
// documents and signals.
const maxLine = 1 << 20

// maxKept bounds the memory of which documents are kept already.
const maxKept = 1 << 16

// ErrLogClosed is returned by [Log.Append] after [Log.Close].
var ErrLogClosed = errors.New("usage: log closed")

// NewLog returns a Log that writes a new chain to w (its first record has
// prev "").
func NewLog(w io.Writer, cfg LogConfig) (*Log, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	l := &Log{w: w, cfg: cfg, kept: map[string]bool{}}
	l.enc = json.NewEncoder(&l.buf)
	l.enc.SetEscapeHTML(false)
	return l, nil
}

// OpenLog opens the log file at path for appending, creating it when
// missing, and continues its chain from its last line. A file whose last
// line is incomplete (a crash while writing it) is an error: check it with
// [VerifyLog] and repair it first.
func OpenLog(path string, cfg LogConfig) (*Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("usage: log: %w", err)
	}
	last, err := lastLine(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("usage: log %s: %w", path, err)
	}
	l, err := NewLog(f, cfg)
	if err != nil {
		f.Close()
		return nil, err
	}
	l.c = f
	if last != nil {
		l.prev = lineHash(last)
	}
	return l, nil
}

func (cfg LogConfig) check() error {
	if cfg.Key == nil {
		return nil
	}
	if _, ok := cfg.Key.Public().(ed25519.PublicKey); !ok {
		return fmt.Errorf("usage: log: the signing key is a %T; want Ed25519", cfg.Key.Public())
	}
	if cfg.KeyID == "" {
		return errors.New("usage: log: a signing key needs its KeyID")
	}
	return nil
}

// lastLine returns the last line of f (without its newline), nil for an
// empty file.
func lastLine(f *os.File) ([]byte, error) {
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil || end == 0 {
		return nil, err
	}
	n := min(end, maxLine+1)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, end-n); err != nil {
		return nil, err
	}
	if buf[len(buf)-1] != '\n' {
		return nil, errors.New("its last line is incomplete")
	}
	buf = buf[:len(buf)-1]
	i := bytes.LastIndexByte(buf, '\n')
	if i < 0 && n < end {
		return nil, fmt.Errorf("its last line is longer than %d bytes", maxLine)
	}
	return buf[i+1:], nil
}

// lineHash is the prev of the line after line.
func lineHash(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// Append writes rec as the log's next line. Its Time, when zero, is the
// current time. With [LogConfig.Documents], the bytes of the documents of
// a record [NewLogRecord] made are kept there, each once. A write error
// is returned by this and every later Append: a log with a hole in it is
// not continued.
func (l *Log) Append(rec LogRecord) error {
	if rec.Time.IsZero() {
		rec.Time = time.Now()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.err != nil:
		return l.err
	case l.ended:
		return ErrLogClosed
	}
	if l.cfg.Documents != "" {
		for _, d := range rec.Documents {
			if d.src != nil && d.SHA256 != "" && !l.kept[d.SHA256] {
				if err := keep(l.cfg.Documents, d.SHA256, d.src.Body()); err != nil {
					return err // the record is not written
				}
				if len(l.kept) >= maxKept {
					clear(l.kept) // keep checks the directory anyway
				}
				l.kept[d.SHA256] = true
			}
		}
	}
	l.buf.Reset()
	if err := l.enc.Encode(rec); err != nil {
		return fmt.Errorf("usage: log: %w", err)
	}
	line, err := l.seal(l.buf.Bytes())
	if err != nil {
		return err
	}
	if len(line) > maxLine {
		return fmt.Errorf("usage: log: a record of %d bytes, over the %d a line may hold: not written", len(line), maxLine)
	}
	l.line = line
	if _, err := l.w.Write(line); err != nil {
		l.err = fmt.Errorf("usage: log: %w", err)
		return l.err
	}
	l.prev = lineHash(line[:len(line)-1])
	return nil
}

// seal turns obj, a JSON object and a newline as the Encoder writes it,
// into a log line: prev, keyid and sig added as its last members.
func (l *Log) seal(obj []byte) ([]byte, error) {
	obj = bytes.TrimRight(obj, "\n")
	line := append(l.line[:0], obj[:len(obj)-1]...) // without its closing brace
	line = append(line, `,"prev":"`...)
	line = append(line, l.prev...)
	line = append(line, '"')
	if l.cfg.Key != nil {
		line = append(line, `,"keyid":`...)
		kid, _ := json.Marshal(l.cfg.KeyID)
		line = append(line, kid...)
		sig, err := l.cfg.Key.Sign(rand.Reader, line, crypto.Hash(0))
		if err != nil {
			return nil, fmt.Errorf("usage: log: signing: %w", err)
		}
		line = append(line, `,"sig":"`...)
		line = base64.RawURLEncoding.AppendEncode(line, sig)
		line = append(line, '"')
	}
	return append(line, "}\n"...), nil
}

// keep writes body to dir/sha256/sum unless it is there.
func keep(dir, sum string, body []byte) error {
	sub := filepath.Join(dir, "sha256")
	path := filepath.Join(sub, sum)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return fmt.Errorf("usage: log: documents: %w", err)
	}
	tmp, err := os.CreateTemp(sub, ".tmp-*")
	if err != nil {
		return fmt.Errorf("usage: log: documents: %w", err)
	}
	_, err = tmp.Write(body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("usage: log: documents: %w", err)
	}
	return nil
}

// Close ends the log with a record whose outcome is [Closed], and closes
// the file OpenLog opened. Later calls do nothing.
func (l *Log) Close() error {
	err := l.Append(LogRecord{Outcome: Closed})
	if errors.Is(err, ErrLogClosed) {
		return nil
	}
	l.mu.Lock()
	l.ended = true
	c := l.c
	l.c = nil
	l.mu.Unlock()
	if c != nil {
		if cerr := c.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("usage: log: %w", cerr)
		}
	}
	return err
}

// readLines calls fn with each line of r (newline excluded) and its
// number, from 1; a line longer than maxLine or without its newline is an
// error of that line.
func readLines(r io.Reader, fn func(n int, line []byte) error) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > maxLine {
				return n, &LogError{Record: n + 1, Reason: fmt.Sprintf("longer than %d bytes", maxLine)}
			}
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if err == io.EOF {
			if len(line) > 0 {
				return n, &LogError{Record: n + 1, Reason: "incomplete: no newline at its end"}
			}
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("usage: log: %w", err)
		}
		n++
		if len(line) > maxLine+1 {
			return n, &LogError{Record: n, Reason: fmt.Sprintf("longer than %d bytes", maxLine)}
		}
		if err := fn(n, line[:len(line)-1]); err != nil {
			return n, err
		}
	}
}
