// Package simtest holds what the emulators' tests share.
package simtest

import "github.com/kpool/kpool/cloudsim/sim"

// Emulator is what the helpers drive of an emulator: its engine's fault
// rate and call log.
type Emulator interface {
	SetFaultRate(rate float64)
	Calls() []sim.Call
}

// FailOperation has an emulator accept a write whose operation will fail
// (sim.FaultFail), for the tests of what a failed operation leaves: it
// calls write(i), i = 0, 1, ..., with the emulator's fault rate at rate,
// until the emulator accepts one with that fault, at most tries times.
// write reports whether its request was accepted; after any other
// attempt, next(i, accepted) readies the next one (undoes a write that
// went through, lets its operation end). FailOperation reports whether a
// write's operation will fail.
func FailOperation(e Emulator, rate float64, tries int, write func(i int) (accepted bool), next func(i int, accepted bool)) bool {
	for i := range tries {
		e.SetFaultRate(rate)
		accepted := write(i)
		e.SetFaultRate(0)
		calls := e.Calls()
		if accepted && len(calls) > 0 && calls[len(calls)-1].Fault == sim.FaultFail {
			return true
		}
		if next != nil {
			next(i, accepted)
		}
	}
	return false
}
