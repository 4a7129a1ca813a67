package redisfleet

import "github.com/politecrawl/robots/redisfleet/internal/lua"

// ScriptNames maps the first 8 hex digits of each script's SHA-1 to its
// name, for the fleet benchmarks' round trips by call.
var ScriptNames = map[string]string{
	lua.Limiter.Hash()[:8]:          "limiter",
	lua.FrontierAdd.Hash()[:8]:      "fr-add",
	lua.FrontierPop.Hash()[:8]:      "fr-pop",
	lua.FrontierDone.Hash()[:8]:     "fr-done",
	lua.FrontierRenew.Hash()[:8]:    "fr-renew",
	lua.FrontierReattach.Hash()[:8]: "fr-reattach",
	lua.FrontierPrune.Hash()[:8]:    "fr-prune",
	lua.FrontierTouch.Hash()[:8]:    "fr-touch",
	lua.FrontierDrop.Hash()[:8]:     "fr-drop",
	lua.FetchUnlock.Hash()[:8]:      "store-unlock",
	lua.FetchRenew.Hash()[:8]:       "store-renew",
}
