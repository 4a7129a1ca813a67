package redisfleet

// ScriptNames maps the first 8 hex digits of each script's SHA-1 to its
// name, for the fleet benchmarks' round trips by call.
var ScriptNames = map[string]string{
	hostScript.Hash()[:8]:       "limiter",
	frAddScript.Hash()[:8]:      "fr-add",
	frPopScript.Hash()[:8]:      "fr-pop",
	frDoneScript.Hash()[:8]:     "fr-done",
	frRenewScript.Hash()[:8]:    "fr-renew",
	frReattachScript.Hash()[:8]: "fr-reattach",
	frPruneScript.Hash()[:8]:    "fr-prune",
	frTouchScript.Hash()[:8]:    "fr-touch",
	frDropScript.Hash()[:8]:     "fr-drop",
	unlockScript.Hash()[:8]:     "store-unlock",
	renewScript.Hash()[:8]:      "store-renew",
}
