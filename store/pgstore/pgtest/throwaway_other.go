//go:build !linux

package pgtest

import (
	"fmt"
	"os"
)

// installHint says what gives the tests a server: the throwaway server
// relies on Linux's parent-death signal to go with the test process, so
// elsewhere there is none.
const installHint = "set " + EnvURL

// cluster is the throwaway server, which is never started here.
type cluster struct{ url string }

// startThrowaway reports that there is no throwaway server: BaseURL skips.
func startThrowaway() (*cluster, error) { return nil, errNotInstalled }

// stop has nothing to stop.
func (c *cluster) stop() error { return nil }

// announce writes line to standard error.
func announce(line string) { fmt.Fprintln(os.Stderr, line) }
