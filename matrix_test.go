package robots_test

import (
	"testing"

	"github.com/politecrawl/robots/internal/matrix"
)

// TestFeatureMatrix crawls a mixed site under every pair of the plugin's
// features (the fleet's pairs run with the fleet's tests) and checks the
// promises that hold whatever the pair: see package internal/matrix.
func TestFeatureMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	matrix.RunPairs(t, matrix.Pairs(matrix.Features, ""))
}
