//go:build !linux

package console_test

import "errors"

// coldSupported reports whether evictFile can drop a file from memory
// here: only on Linux.
const coldSupported = false

// evictFile is not available outside Linux.
func evictFile(string) (int64, error) {
	return 0, errors.New("evicting a file from the page cache needs Linux")
}

// pageFaults is not available outside Linux.
func pageFaults() (int64, error) { return 0, errors.New("needs Linux") }
