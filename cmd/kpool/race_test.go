//go:build race

package main

// raceDetector: the tests run under -race, where every process runs several
// times slower beside the other packages' tests, and wall-clock bounds on
// real processes measure the machine rather than kpool.
const raceDetector = true
