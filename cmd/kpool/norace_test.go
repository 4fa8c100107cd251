//go:build !race

package main

// raceDetector: the tests run without -race (see race_test.go).
const raceDetector = false
