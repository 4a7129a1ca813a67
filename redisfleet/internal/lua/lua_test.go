package lua

import (
	"context"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/robots/redisfleet/internal/redistest"
)

// TestLuaScripts: every script here compiles on a real Redis once its
// includes are expanded, names only fragments that exist, and every
// fragment in include/ is included by some script.
func TestLuaScripts(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr})
	defer rdb.Close()
	used := map[string]bool{}
	scripts, err := fs.Glob(files, "*.lua")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, name := range scripts {
		var walk func(p string)
		walk = func(p string) {
			b, err := files.ReadFile(p)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for line := range strings.Lines(string(b)) {
				if inc, ok := strings.CutPrefix(line, "--#include "); ok {
					inc = strings.TrimSpace(inc)
					used[inc] = true
					walk("include/" + inc + ".lua")
				}
			}
		}
		walk(name)
		if err := rdb.ScriptLoad(context.Background(), Source(name)).Err(); err != nil {
			t.Errorf("%s does not compile: %v", name, err)
		}
	}
	frags, _ := fs.Glob(files, "include/*.lua")
	for _, f := range frags {
		if n := strings.TrimSuffix(path.Base(f), ".lua"); !used[n] {
			t.Errorf("%s is included by no script", f)
		}
	}
}
