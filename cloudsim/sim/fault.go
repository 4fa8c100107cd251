package sim

import (
	"math"
	"math/rand"
)

// The faults Request.Fault injects, as the call log names them.
const (
	Fault500  = "500"  // answer 500 Internal Server Error
	Fault503  = "503"  // answer 503 Service Unavailable
	FaultDrop = "drop" // close the connection without answering
	FaultFail = "fail" // accept the request; the operation it starts ends Failed
)

// dice decide which requests fail, from a seeded source.
type dice struct {
	rate float64
	rnd  *rand.Rand
	// failNext is how many of the next operations end Failed whatever
	// the dice say (Engine.FailNextOperations).
	failNext int
}

// setRate sets the fraction of requests that fail, clamped to 0..1.
func (d *dice) setRate(rate float64) {
	if math.IsNaN(rate) || rate < 0 {
		rate = 0
	}
	d.rate = math.Min(rate, 1)
}

// roll returns the fault of one request: "" or one of the kinds, each as
// likely; FaultFail only for a request that may write.
func (d *dice) roll(write bool) string {
	if d.rate <= 0 || d.rnd.Float64() >= d.rate {
		return ""
	}
	kinds := []string{Fault500, Fault503, FaultDrop}
	if write {
		kinds = append(kinds, FaultFail)
	}
	return kinds[d.rnd.Intn(len(kinds))]
}
