//go:build unix

package dialect

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used (user and system),
// which the machine's other work does not inflate as it does wall time.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
