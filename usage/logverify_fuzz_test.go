package usage

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzVerifyLog: any input is read without a panic, and is either intact
// or rejected with a *LogError naming a record within it (or the one
// after its last, for a log cut short).
func FuzzVerifyLog(f *testing.F) {
	f.Add([]byte(`{"outcome":"closed","prev":""}` + "\n"))
	f.Add([]byte(`{"outcome":"fetched","prev":""}` + "\n" + `{"outcome":"closed","prev":"x"}` + "\n"))
	f.Add([]byte(`{"outcome":"closed","prev":"","keyid":"k","sig":"AAAA"}` + "\n"))
	f.Add([]byte("{}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := VerifyLog(bytes.NewReader(data), nil)
		if err == nil {
			return
		}
		var le *LogError
		if !errors.As(err, &le) {
			t.Fatalf("error %v is not a *LogError", err)
		}
		if lines := bytes.Count(data, []byte("\n")); le.Record < 1 || le.Record > lines+1 || n > lines {
			t.Fatalf("record %d named, %d counted, of %d lines", le.Record, n, lines)
		}
	})
}
