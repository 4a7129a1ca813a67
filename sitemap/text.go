package sitemap

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

func (r *Reader) startText(sr *bufio.Reader, size int) error {
	head, _ := sr.Peek(size)
	line := head
	if i := bytes.IndexAny(head, "\r\n"); i >= 0 {
		line = head[:i]
	} else if err := r.readErr(); err != nil {
		return fmt.Errorf("sitemap: %w", err) // the first line is cut: nothing to judge by
	}
	line = bytes.TrimRightFunc(line, func(c rune) bool { return c < 0x80 && isSpace(byte(c)) }) // not empty: line[0] is not a space
	if !looksLikeURL(line) {
		what := "neither XML nor a text sitemap"
		switch {
		case line[0] == '{' || line[0] == '[':
			what = "JSON"
		case bytes.ContainsFunc(line, func(c rune) bool { return c < ' ' && c != '\t' || c == utf8.RuneError }):
			what = "binary data"
		}
		if what == "binary data" {
			return fmt.Errorf("%w: %s", ErrNotSitemap, what)
		}
		if len(line) > 40 {
			line = line[:40]
		}
		return fmt.Errorf("%w: %s (first line %q)", ErrNotSitemap, what, line)
	}
	r.format = FormatText
	sc := bufio.NewScanner(sr)
	sc.Buffer(make([]byte, 0, min(4096, r.lim.MaxTextRun+1)), r.lim.MaxTextRun+1)
	sc.Split(r.splitLines)
	r.lines = sc
	return nil
}

// looksLikeURL: the rule that makes a document a text sitemap: its first
// non-blank line starts with http:// or https:// (any case) followed by a
// host.
func looksLikeURL(b []byte) bool {
	for _, p := range []string{"http://", "https://"} {
		if len(b) > len(p) && strings.EqualFold(string(b[:len(p)]), p) {
			c := b[len(p)]
			return c != '/' && c != '?' && c != '#' && !isSpace(c)
		}
	}
	return false
}

// splitLines is scanLines, except that a last line without its line end is
// withheld when the bytes stopped with an error (a read failure, MaxBytes)
// rather than at their end: it may be a URL cut short.
func (r *Reader) splitLines(data []byte, atEOF bool) (int, []byte, error) {
	if err := r.count.err; atEOF && err != nil && err != io.EOF && !bytes.ContainsAny(data, "\r\n") {
		return 0, nil, err
	}
	return scanLines(data, atEOF)
}

// scanLines splits on \n, \r\n and a lone \r.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\r' {
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if !atEOF {
				return 0, nil, nil // need to know whether \n follows
			}
		}
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

func (r *Reader) nextText() (Entry, error) {
	for r.lines.Scan() {
		line := bytes.TrimSpace(r.lines.Bytes())
		if len(line) == 0 {
			continue
		}
		if r.entries++; r.entries > r.lim.MaxEntries {
			return Entry{}, &LimitError{Limit: LimitEntries, Max: int64(r.lim.MaxEntries)}
		}
		if len(line) > r.lim.MaxLocLength {
			r.rejected[RejectLocTooLong]++
			continue
		}
		if !looksLikeURL(line) {
			r.rejected[RejectTextNotURL]++
			continue
		}
		loc, reason := r.resolve(string(line))
		if reason != "" {
			r.rejected[reason]++
			continue
		}
		return Entry{Loc: loc, Priority: -1}, nil
	}
	err := r.lines.Err()
	switch {
	case err == nil:
		return Entry{}, io.EOF
	case errors.Is(err, bufio.ErrTooLong):
		return Entry{}, &LimitError{Limit: LimitTextRun, Max: int64(r.lim.MaxTextRun)}
	case errors.Is(err, ErrLimit):
		return Entry{}, err
	}
	return Entry{}, fmt.Errorf("sitemap: reading text: %w", err)
}
