// Package lua holds the fleet's Lua scripts, shared by package redisfleet
// (the limiter, the fetch lock) and package fleetfrontier (the queue): one
// embedded file a script, fragments they share in include/. A frontier
// script runs the limiter's fragments (a pop grants a permit, a done
// report carries releases), so both packages take their scripts from here.
// Each file documents its KEYS, ARGV and reply.
package lua

import (
	"embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed *.lua include/*.lua
var files embed.FS

// The scripts.
var (
	Limiter = script("limiter") // every decision about a host

	FetchUnlock = script("fetch_unlock") // the robots.txt fetch lock's unlock
	FetchRenew  = script("fetch_renew")  // and its renewal

	FrontierAdd      = script("frontier_add")
	FrontierPop      = script("frontier_pop")
	FrontierDone     = script("frontier_done")
	FrontierRenew    = script("frontier_renew")
	FrontierReattach = script("frontier_reattach")
	FrontierPrune    = script("frontier_prune")
	FrontierTouch    = script("frontier_touch")
	FrontierDrop     = script("frontier_drop")
)

// script returns the script of <name>.lua.
func script(name string) *redis.Script {
	return redis.NewScript(Source(name + ".lua"))
}

// Source returns the text of the embedded file path with every line
// "--#include <fragment>" replaced by the text of include/<fragment>.lua
// (itself expanded the same way). The files are part of the binary: a
// missing one is a build mistake, which every test of a script finds, so
// it panics.
func Source(path string) string {
	b, err := files.ReadFile(path)
	if err != nil {
		panic("redisfleet: " + err.Error())
	}
	var sb strings.Builder
	for line := range strings.Lines(string(b)) {
		if name, ok := strings.CutPrefix(line, "--#include "); ok {
			sb.WriteString(Source("include/" + strings.TrimSpace(name) + ".lua"))
			continue
		}
		sb.WriteString(line)
	}
	return sb.String()
}
