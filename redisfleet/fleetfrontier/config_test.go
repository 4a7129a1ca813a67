package fleetfrontier

import (
	"testing"
	"time"
)

// TestConfig: the zero Config is the frontier's defaults, and a value
// below zero reads as its default.
func TestConfig(t *testing.T) {
	if got := (Config{}).resolve(); got != (frontierConfig{name: DefaultName, perHost: 1, maxWait: time.Second, hold: 2 * time.Minute,
		outageLimit: DefaultOutageLimit, journal: true, journalCap: DefaultJournalCap, ttl: DefaultTTL}) {
		t.Errorf("zero Config: %+v", got)
	}
	neg := (Config{PerHost: -1, MaxWait: -1, TTL: time.Second, Batching: -1, NoJournal: true}).resolve()
	if neg.perHost != 1 || neg.maxWait != time.Second || neg.ttl != time.Minute || neg.batch != 0 || neg.journal {
		t.Errorf("Config below zero: %+v; want the defaults, a TTL of at least a minute, no journal", neg)
	}
}
