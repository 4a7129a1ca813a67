package sitemap

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchURLSet generates a urlset of n entries of about 300 bytes each
// (loc, lastmod, changefreq, priority, two xhtml:link alternates): 50,000
// entries make about 15 MB.
func benchURLSet(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">` + "\n")
	for i := range n {
		fmt.Fprintf(&b, "  <url>\n    <loc>https://www.example.com/products/category-%d/item-%07d.html</loc>\n"+
			"    <lastmod>2024-%02d-%02dT10:%02d:00+00:00</lastmod>\n    <changefreq>weekly</changefreq>\n    <priority>0.%d</priority>\n"+
			"    <xhtml:link rel=\"alternate\" hreflang=\"de\" href=\"https://www.example.com/de/item-%07d.html\"/>\n"+
			"    <xhtml:link rel=\"alternate\" hreflang=\"fr\" href=\"https://www.example.com/fr/item-%07d.html\"/>\n  </url>\n",
			i%100, i, 1+i%12, 1+i%28, i%60, i%10, i, i)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// The structs a user would Unmarshal the same urlset into.
type xmlURLSet struct {
	URLs []xmlURL `xml:"url"`
}
type xmlURL struct {
	Loc        string    `xml:"loc"`
	LastMod    string    `xml:"lastmod"`
	ChangeFreq string    `xml:"changefreq"`
	Priority   float64   `xml:"priority"`
	Links      []xmlLink `xml:"http://www.w3.org/1999/xhtml link"`
}
type xmlLink struct {
	Rel      string `xml:"rel,attr"`
	Hreflang string `xml:"hreflang,attr"`
	Href     string `xml:"href,attr"`
}

var benchDoc = sync.OnceValue(func() []byte { return benchURLSet(50_000) })

func readerCount(b *testing.B, r io.Reader, lim Limits) int {
	rd := NewReader(r, "https://www.example.com/sitemap.xml", lim)
	n := 0
	for {
		e, err := rd.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n += len(e.Alternates) + 1
	}
}

func unmarshalCount(b *testing.B, doc []byte) int {
	var v xmlURLSet
	if err := xml.Unmarshal(doc, &v); err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, u := range v.URLs {
		n += len(u.Links) + 1
	}
	return n
}

// heapPeak runs f while sampling the heap in use (bytes in heap spans
// holding objects, HeapInuse) every 100µs, and returns the peak above the
// heap in use before f, after a GC.
func heapPeak(f func()) uint64 {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	read := func() uint64 {
		metrics.Read(samples)
		return samples[0].Value.Uint64() + samples[1].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	f()
	close(stop)
	<-done
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	if peak.Load() < base {
		return 0
	}
	return peak.Load() - base
}

// BenchmarkURLSet50k compares the Reader with xml.Unmarshal into structs on
// the same generated 50,000-URL urlset (about 15 MB) in memory: throughput
// (MB/s of the document) and allocations. The peak heap is measured by
// BenchmarkPeakHeap50k, in a fresh process: here the document itself, live
// in the heap, lets the GC defer collection by as much again.
func BenchmarkURLSet50k(b *testing.B) {
	doc := benchDoc()
	const want = 150_000 // entries + alternates
	b.Run("Reader", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if n := readerCount(b, bytes.NewReader(doc), Limits{}); n != want {
				b.Fatalf("%d", n)
			}
		}
	})
	b.Run("Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if n := unmarshalCount(b, doc); n != want {
				b.Fatalf("%d", n)
			}
		}
	})
}

// BenchmarkReaderLarge reads 200,000 and 400,000 URLs (about 60 and 120
// MB, limits raised) from a file in a fresh process (as
// BenchmarkPeakHeap50k): the peak heap stays that of 50,000.
func BenchmarkReaderLarge(b *testing.B) {
	for _, n := range []int{200_000, 400_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "sitemap.xml")
			doc := benchURLSet(n)
			if err := os.WriteFile(path, doc, 0o644); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(doc)))
			doc = nil
			var m measurement
			for b.Loop() {
				m = measure(b, "reader-unlimited", path)
			}
			if m.Err != "" || m.Entries != n {
				b.Fatalf("%d entries, error %s", m.Entries, m.Err)
			}
			b.ReportMetric(float64(m.PeakHeap)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(m.MaxRSS)/(1<<20), "peak-RSS-MB")
		})
	}
}

// BenchmarkReaderGzip: the same 50,000 URLs gzipped.
func BenchmarkReaderGzip(b *testing.B) {
	doc := gz(b, benchDoc())
	b.SetBytes(int64(len(benchDoc())))
	b.ReportAllocs()
	for b.Loop() {
		readerCount(b, bytes.NewReader(doc), Limits{})
	}
}

func xmlUnmarshal(d []byte, v any) error { return xml.Unmarshal(d, v) }

// BenchmarkPeakHeap50k reads the 50,000-URL urlset once in a fresh process
// per side and reports the peak heap in use while reading (metrics
// sampled every 100µs) and the process's peak RSS: the Reader streaming the
// file, Unmarshal given the file's bytes.
func BenchmarkPeakHeap50k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "sitemap.xml")
	if err := os.WriteFile(path, benchDoc(), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"reader", "unmarshal"} {
		b.Run(mode, func(b *testing.B) {
			var m measurement
			for b.Loop() {
				m = measure(b, mode, path)
			}
			if m.Err != "" || m.Entries != 50_000 {
				b.Fatalf("%d entries, error %s", m.Entries, m.Err)
			}
			b.ReportMetric(float64(m.PeakHeap)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(m.MaxRSS)/(1<<20), "peak-RSS-MB")
		})
	}
}
