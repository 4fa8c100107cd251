//go:build !linux

package main

// releaseExecutable does nothing outside Linux: the executable's pages are
// left to the system.
func releaseExecutable() (int64, error) { return 0, nil }
