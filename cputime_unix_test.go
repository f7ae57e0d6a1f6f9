//go:build unix

package identity_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process has used (user and system), for the
// benchmarks' cpu-ns/op: ns/op is the time of the wall, which a machine
// busy with other work stretches.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
