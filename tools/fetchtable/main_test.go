package main

import (
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The copies of the fetch table that must match the dialects' data, relative
// to this package's directory.
var copies = []string{
	"../../README.md",
	"../../docs/dialects.md",
	"../../policy/doc.go",
}

// TestCopiesCurrent fails when a copy of the fetch table differs from what
// the generator writes.
func TestCopiesCurrent(t *testing.T) {
	for _, path := range copies {
		t.Run(path, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := rewrite(path, src)
			if err != nil {
				t.Fatal(err)
			}
			if string(src) != string(want) {
				t.Errorf("%s: the fetch table differs from the dialects' data; run `go generate ./policy`\n%s", path, firstDiff(string(src), string(want)))
			}
		})
	}
}

// firstDiff shows the first line where have and want differ.
func firstDiff(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(h) || i < len(w); i++ {
		var hl, wl string
		if i < len(h) {
			hl = h[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if hl != wl {
			return fmt.Sprintf("first difference, line %d:\n  have %q\n  want %q", i+1, hl, wl)
		}
	}
	return ""
}

const goDoc = `// Package p does things.
//
// # Fetch rules
//
// What each dialect does:
//
// fetch-table:begin
//	stale
// fetch-table:end
//
// More text.
package p
`

const markdown = "# T\n\nIntro.\n\n<!-- fetch-table:begin -->\n| stale |\n<!-- fetch-table:end -->\n\nMore.\n"

func TestRewrite(t *testing.T) {
	for _, tc := range []struct{ name, src, table string }{
		{"doc.go", goDoc, tableText()},
		{"README.md", markdown, tableMarkdown()},
	} {
		out, err := rewrite(tc.name, []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		s := string(out)
		if strings.Contains(s, "stale") || !strings.Contains(s, "More") || !strings.Contains(s, "fetch-table:end") {
			t.Errorf("%s: region not replaced, or text around it lost:\n%s", tc.name, s)
		}
		for _, l := range strings.Split(strings.TrimSuffix(tc.table, "\n"), "\n") {
			if !strings.Contains(s, l+"\n") {
				t.Errorf("%s: table line %q missing:\n%s", tc.name, l, s)
				break
			}
		}
		again, err := rewrite(tc.name, out)
		if err != nil || string(again) != s {
			t.Errorf("%s: second rewrite changed the file (err %v)", tc.name, err)
		}
		if tc.name == "doc.go" {
			// gofmt leaves the generated doc comment as it is, and go/doc
			// sees the table as one preformatted block.
			f, err := format.Source(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(f) != s {
				t.Errorf("gofmt changes the generated file:\n%s", firstDiff(s, string(f)))
			}
		}
	}
}

func TestRewriteErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"README.md", "# T\n\nno table here\n", "no fetch-table markers"},
		{"doc.go", "// Package p.\npackage p\n", "no fetch-table markers"},
		{"README.md", "<!-- fetch-table:begin -->\n", "without"},
		{"README.md", "<!-- fetch-table:end -->\n<!-- fetch-table:begin -->\n", "comes before"},
		{"README.md", "<!-- fetch-table:begin -->\n<!-- fetch-table:begin -->\n<!-- fetch-table:end -->\n", "second"},
		{"doc.go", "<!-- fetch-table:begin -->\n<!-- fetch-table:end -->\n", "no fetch-table markers"},
		{"notes.txt", "", "not a Markdown"},
	} {
		_, err := rewrite(tc.name, []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("rewrite(%s, %q): error %v, want one containing %q", tc.name, tc.src, err, tc.want)
		}
	}
}

// TestRun writes files in place and refuses to write any when one lacks its
// markers.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "README.md")
	bad := filepath.Join(dir, "doc.go")
	if err := os.WriteFile(good, []byte(markdown), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("// Package p.\npackage p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{good, bad}); err == nil || !strings.Contains(err.Error(), "no fetch-table markers") {
		t.Errorf("run with an unmarked file: error %v", err)
	}
	if b, _ := os.ReadFile(good); string(b) != markdown {
		t.Errorf("run wrote %s although another file failed", good)
	}
	if err := run([]string{good}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(good); !strings.Contains(string(b), tableMarkdown()) {
		t.Errorf("run did not write the table:\n%s", b)
	}
}
