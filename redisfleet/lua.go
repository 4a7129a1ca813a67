package redisfleet

import (
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

// luaFiles holds the fleet's Lua scripts, one file a script in lua/, and
// the fragments they share in lua/include/.
//
//go:embed lua/*.lua lua/include/*.lua
var luaFiles embed.FS

// luaScript returns the script of lua/<name>.lua.
func luaScript(name string) *redis.Script {
	return redis.NewScript(luaSource("lua/" + name + ".lua"))
}

// luaSource returns the text of the embedded file path with every line
// "--#include <fragment>" replaced by the text of
// lua/include/<fragment>.lua (itself expanded the same way). The files
// are part of the binary: a missing one is a build mistake, which every
// test of a script finds, so it panics.
func luaSource(path string) string {
	b, err := luaFiles.ReadFile(path)
	if err != nil {
		panic("redisfleet: " + err.Error())
	}
	var sb strings.Builder
	for line := range strings.Lines(string(b)) {
		if name, ok := strings.CutPrefix(line, "--#include "); ok {
			sb.WriteString(luaSource("lua/include/" + strings.TrimSpace(name) + ".lua"))
			continue
		}
		sb.WriteString(line)
	}
	return sb.String()
}
