package testutil

import (
	"runtime"
	"strings"
)

// Goroutines returns the stack of every goroutine, one string each, as
// runtime.Stack writes them: a header line such as "goroutine 7
// [select]:" and the frames below it. A test polls it to learn that
// goroutines are blocked where it means them to be, instead of sleeping
// for a guess of how long they take to get there.
func Goroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(string(buf[:n]), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}
