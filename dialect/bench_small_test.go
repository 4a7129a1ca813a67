package dialect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkParseSmall: one op is Google.Parse(body).For("Googlebot") of a
// small real robots.txt (testdata/small, 22 to 184 bytes), the work of
// Google's parser on the same file; -benchmem gives its allocations.
func BenchmarkParseSmall(b *testing.B) {
	files, err := filepath.Glob("testdata/small/*.txt")
	if err != nil || len(files) == 0 {
		b.Fatalf("no small files: %v", err)
	}
	for _, name := range files {
		body, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("file="+strings.TrimSuffix(filepath.Base(name), ".txt"), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			reportCPU(b, func() { sinkRuleset = Google.Parse(body).For("Googlebot") })
		})
	}
}
