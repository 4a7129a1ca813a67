package sitemap

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// spoolMemory is how much of a spooled document is kept in memory; the
// rest goes to a temporary file.
const spoolMemory = 1 << 20

// spooled is a document body read whole: a memory head and a file tail.
type spooled struct {
	head []byte
	file *os.File
	size int64
}

// spool reads body into memory and, past spoolMemory, a temporary file in
// dir, up to limit bytes (0: defaultMaxBytes). It returns what it read and
// the error that stopped it early: the body's, or a *LimitError.
func spool(body io.Reader, limit int64, dir string) (*spooled, error) {
	limit = orDefault(limit, defaultMaxBytes)
	sp := &spooled{}
	head := make([]byte, min(int64(spoolMemory), limit+1))
	n, err := io.ReadFull(body, head)
	sp.head, sp.size = head[:n], int64(n)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return sp, nil
	case err != nil:
		return sp, err
	}
	if sp.size > limit {
		sp.head, sp.size = sp.head[:limit], limit
		return sp, &LimitError{Limit: "bytes", Max: limit}
	}
	f, err := os.CreateTemp(dir, "sitemap-*.spool")
	if err != nil {
		return sp, fmt.Errorf("spooling: %w", err)
	}
	os.Remove(f.Name()) // gone when closed (where the system allows)
	sp.file = f
	m, err := io.Copy(f, io.LimitReader(body, limit-sp.size+1))
	sp.size += m
	if err == nil && sp.size > limit {
		err = &LimitError{Limit: "bytes", Max: limit}
		f.Truncate(limit - int64(len(sp.head)))
		sp.size = limit
	}
	if _, serr := f.Seek(0, io.SeekStart); serr != nil && err == nil {
		err = fmt.Errorf("spooling: %w", serr)
	}
	return sp, err
}

// reader reads the spooled bytes, then returns err (io.EOF when nil).
func (sp *spooled) reader(err error) io.Reader {
	rs := []io.Reader{bytes.NewReader(sp.head)}
	if sp.file != nil {
		rs = append(rs, io.LimitReader(sp.file, sp.size-int64(len(sp.head))))
	}
	if err != nil {
		rs = append(rs, errReader{err})
	}
	return io.MultiReader(rs...)
}

func (sp *spooled) Close() error {
	if sp.file == nil {
		return nil
	}
	name := sp.file.Name()
	err := sp.file.Close()
	os.Remove(name)
	return err
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
