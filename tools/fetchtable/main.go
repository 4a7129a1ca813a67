// Command fetchtable rewrites the table of what each robots.txt fetch outcome
// means in each dialect, wherever the project keeps a copy of it, from the
// dialects' own answers ([dialect.Dialect.Decide]: see probe).
//
// Usage:
//
//	go run ./fetchtable FILE...   (in the tools module, tools/)
//
// Each FILE is rewritten in place between its two marker lines, which stay:
//
//   - a Markdown file (.md) gets the Markdown table, with a blank line on
//     each side, between the lines
//     <!-- fetch-table:begin --> and <!-- fetch-table:end -->;
//   - a Go file (.go) gets the text table as a preformatted block of a doc
//     comment (each line "//" and a tab, a "//" line on each side) between
//     the comment lines "// fetch-table:begin" and "// fetch-table:end".
//
// Marker lines are matched after trimming surrounding white space. A file
// without exactly one pair of markers, in order, is an error, and no file is
// written unless all of them can be. A file whose table is already current
// is left untouched.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Marker lines.
const (
	mdBegin = "<!-- fetch-table:begin -->"
	mdEnd   = "<!-- fetch-table:end -->"
	goBegin = "// fetch-table:begin"
	goEnd   = "// fetch-table:end"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fetchtable:", err)
		os.Exit(1)
	}
}

func run(files []string) error {
	if len(files) == 0 {
		return errors.New("usage: fetchtable FILE... (Markdown or Go files with fetch-table markers)")
	}
	out := make([][]byte, len(files))
	changed := make([]bool, len(files))
	for i, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		if out[i], err = rewrite(name, src); err != nil {
			return err
		}
		changed[i] = !bytes.Equal(out[i], src)
	}
	for i, name := range files {
		if !changed[i] {
			continue
		}
		fi, err := os.Stat(name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(name, out[i], fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// markers returns the begin and end marker lines for a file, by its
// extension.
func markers(name string) (begin, end string, err error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".markdown":
		return mdBegin, mdEnd, nil
	case ".go":
		return goBegin, goEnd, nil
	}
	return "", "", fmt.Errorf("%s: not a Markdown (.md) or Go (.go) file", name)
}

// table returns the lines that belong between the markers of a file.
func table(name string) []string {
	if strings.ToLower(filepath.Ext(name)) == ".go" {
		lines := []string{"//"}
		for _, l := range strings.Split(strings.TrimSuffix(tableText(), "\n"), "\n") {
			if l == "" {
				lines = append(lines, "//")
			} else {
				lines = append(lines, "//\t"+l)
			}
		}
		return append(lines, "//")
	}
	lines := []string{""}
	lines = append(lines, strings.Split(strings.TrimSuffix(tableMarkdown(), "\n"), "\n")...)
	return append(lines, "")
}

// rewrite returns src with the region between its markers replaced by the
// current table. name gives the file's kind and appears in errors.
func rewrite(name string, src []byte) ([]byte, error) {
	begin, end, err := markers(name)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(src), "\n")
	b, e := -1, -1
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case begin:
			if b >= 0 {
				return nil, fmt.Errorf("%s:%d: second %q marker (first on line %d)", name, i+1, begin, b+1)
			}
			b = i
		case end:
			if e >= 0 {
				return nil, fmt.Errorf("%s:%d: second %q marker (first on line %d)", name, i+1, end, e+1)
			}
			e = i
		}
	}
	switch {
	case b < 0 && e < 0:
		return nil, fmt.Errorf("%s: no fetch-table markers: put the lines %q and %q where the table goes", name, begin, end)
	case b < 0:
		return nil, fmt.Errorf("%s: %q marker (line %d) without %q", name, end, e+1, begin)
	case e < 0:
		return nil, fmt.Errorf("%s: %q marker (line %d) without %q", name, begin, b+1, end)
	case e < b:
		return nil, fmt.Errorf("%s: %q (line %d) comes before %q (line %d)", name, end, e+1, begin, b+1)
	}
	out := append(lines[:b+1:b+1], table(name)...)
	out = append(out, lines[e:]...)
	return []byte(strings.Join(out, "\n")), nil
}
