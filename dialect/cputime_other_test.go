//go:build !unix

package dialect

import "time"

// processCPU is not measured here.
func processCPU() (time.Duration, bool) { return 0, false }
