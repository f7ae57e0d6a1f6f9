//go:build race

package main

// The tests run with -race build the binary they start with -race too.
func init() { raceEnabled = true }
