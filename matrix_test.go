package robots_test

import (
	"testing"

	"github.com/politecrawl/robots/testkit/crawltest"
)

// TestFeatureMatrix crawls a mixed site under every pair of the plugin's
// features (the fleet's pairs run with the fleet's tests) and checks the
// promises that hold whatever the pair: see package testkit/crawltest.
func TestFeatureMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	crawltest.RunPairs(t, crawltest.Pairs(crawltest.Features, ""))
}
