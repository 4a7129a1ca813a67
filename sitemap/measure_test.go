package sitemap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// measurement is what a child process (TestMeasureChild) reports.
type measurement struct {
	PeakHeap uint64 // peak heap in use while reading, above the heap before
	Entries  int
	Bytes    int64
	Err      string
	Limit    bool  // errors.Is(err, ErrLimit)
	NotSM    bool  // errors.Is(err, ErrNotSitemap)
	MaxRSS   int64 // the child's peak RSS in bytes: VmHWM of /proc/self/status
}

// measure runs mode on path in a fresh process of the test binary, so that
// nothing else lives in its heap, and returns its report with its peak RSS.
func measure(t testing.TB, mode, path string) measurement {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMeasureChild$", "-test.bench=^$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SITEMAP_MEASURE="+mode, "SITEMAP_MEASURE_FILE="+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("child %s: %v\n%s", mode, err, out.String())
	}
	var m measurement
	for _, line := range strings.Split(out.String(), "\n") {
		if s, ok := strings.CutPrefix(line, "MEASUREMENT "); ok {
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if m.MaxRSS == 0 {
		// No /proc: the rusage figure, which on Linux also covers the
		// parent's RSS at the time of the fork (the child starts in the
		// parent's address space), so it is an upper bound.
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			m.MaxRSS = ru.Maxrss * 1024 // KiB on Linux
		}
	}
	return m
}

// peakRSS is this process's peak resident set size (VmHWM), 0 when unknown.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(s), "%d kB", &kb)
			return kb << 10
		}
	}
	return 0
}

// TestMeasureChild is the child side of measure; it does nothing in a
// normal run.
func TestMeasureChild(t *testing.T) {
	mode, path := os.Getenv("SITEMAP_MEASURE"), os.Getenv("SITEMAP_MEASURE_FILE")
	if mode == "" {
		t.Skip("the child process of measure")
	}
	var m measurement
	var err error
	m.PeakHeap = heapPeak(func() {
		switch mode {
		case "reader", "reader-unlimited":
			var f *os.File
			if f, err = os.Open(path); err != nil {
				return
			}
			defer f.Close()
			lim := Limits{}
			if mode == "reader-unlimited" {
				lim = Limits{MaxBytes: 1 << 40, MaxEntries: 1 << 40}
			}
			r := NewReader(bufio.NewReader(f), "https://example.com/sitemap.xml", lim)
			for _, err2 := range r.All() {
				if err2 != nil {
					err = err2
					break
				}
				m.Entries++
			}
			m.Bytes = r.Bytes()
		case "unmarshal":
			var d []byte
			if d, err = os.ReadFile(path); err != nil {
				return
			}
			var v xmlURLSet
			err = xmlUnmarshal(d, &v)
			m.Entries = len(v.URLs)
			m.Bytes = int64(len(d))
		default:
			err = fmt.Errorf("unknown mode %q", mode)
		}
	})
	if err != nil {
		m.Err = err.Error()
		m.Limit, m.NotSM = errors.Is(err, ErrLimit), errors.Is(err, ErrNotSitemap)
	}
	m.MaxRSS = peakRSS()
	b, _ := json.Marshal(m)
	fmt.Printf("MEASUREMENT %s\n", b)
}

// A 1 GiB gzip bomb of each kind is refused by a limit, in a process whose
// peak RSS stays under 64 MiB.
func TestGzipBomb1GiBRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 1 GiB bombs")
	}
	dir := t.TempDir()
	cases := []struct {
		name, head, fill string
		limit            string // "" = ErrNotSitemap
	}{
		{"zeros", "", "\x00", ""},
		{"one text node", "<urlset><url><loc>http://example.com/a</loc></url><url><loc>", " ", LimitTextRun},
		{"elements", "<urlset><url><loc>http://example.com/a</loc></url>", "<x>" + strings.Repeat("y", 1017) + "</x>", LimitBytes},
		{"text lines", "http://example.com/a\n", strings.Repeat(" ", 1023) + "\n", LimitBytes},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".gz")
			bomb := gzipBomb(t, c.head, c.fill, 1<<30)
			if err := os.WriteFile(path, bomb, 0o644); err != nil {
				t.Fatal(err)
			}
			m := measure(t, "reader", path)
			t.Logf("1 GiB bomb (%d bytes gzipped) of %s: %s after %d bytes and %d entries; peak heap %.1f MiB, peak RSS %.1f MiB",
				len(bomb), c.name, m.Err, m.Bytes, m.Entries, float64(m.PeakHeap)/(1<<20), float64(m.MaxRSS)/(1<<20))
			if c.limit == "" && !m.NotSM || c.limit != "" && (!m.Limit || !strings.Contains(m.Err, c.limit)) {
				t.Errorf("error %q, want the %q limit", m.Err, c.limit)
			}
			if m.MaxRSS >= 64<<20 {
				t.Errorf("peak RSS %d bytes, want under 64 MiB", m.MaxRSS)
			}
		})
	}
}
