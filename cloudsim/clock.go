package cloudsim

import (
	"time"

	"github.com/kpool/kpool/cloudsim/internal/clock"
)

// Clock tells an emulator what time it is. Emulators compute every state
// change from Now when a request arrives, so tests drive them with a
// ManualClock and never sleep.
type Clock = clock.Clock

// RealClock is the wall clock, the emulators' default.
type RealClock = clock.Real

// ManualClock is a clock that moves only when told to (Advance, Set). It is
// safe for concurrent use.
type ManualClock = clock.Manual

// NewManualClock returns a ManualClock reading start.
func NewManualClock(start time.Time) *ManualClock { return clock.NewManual(start) }
