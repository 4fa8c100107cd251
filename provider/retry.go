package provider

import "time"

// Retry is how a driver times out and retries one call to its cloud: the
// same policy for every SDK, mapped onto each SDK's own retryer. A try
// never outlives TryTimeout (a tarpit cannot hold a call for ever); a
// failure a retry may cure (500, 502, 503, 504, a dropped connection, a
// try timed out) is tried again, Attempts in all, waiting Backoff between
// tries. Throttling (429) is never retried by a driver: it goes back to
// kpool's controllers, which honour Retry-After without holding a worker.
type Retry struct {
	// Attempts is the number of tries, the first included (at least 1).
	Attempts int
	// TryTimeout bounds each try, from sending the request to reading the
	// answer's body; 0 is no bound.
	TryTimeout time.Duration
	// Delay is the wait before the second try; each later wait doubles.
	Delay time.Duration
	// MaxDelay bounds every wait. An SDK that honours Retry-After retries
	// an answer only when it asks for MaxDelay or less; a longer wait goes
	// back to the controllers.
	MaxDelay time.Duration
}

// DefaultRetry is every driver's default: three 30-second tries, 100 ms
// and then 200 ms apart, no wait longer than 500 ms.
func DefaultRetry() Retry {
	return Retry{Attempts: 3, TryTimeout: 30 * time.Second, Delay: 100 * time.Millisecond, MaxDelay: 500 * time.Millisecond}
}

// RetryOr returns *r, or DefaultRetry when r is nil.
func RetryOr(r *Retry) Retry {
	if r == nil {
		return DefaultRetry()
	}
	return *r
}

// Tries is Attempts, at least 1.
func (r Retry) Tries() int { return max(r.Attempts, 1) }

// Backoff is the wait before try n+1, after n failed tries (n from 1):
// Delay, doubling with each try, at most MaxDelay.
func (r Retry) Backoff(n int) time.Duration {
	d := max(r.Delay, 0)
	for i := 1; i < n && d < r.MaxDelay; i++ {
		d *= 2
	}
	if r.MaxDelay > 0 {
		d = min(d, r.MaxDelay)
	}
	return d
}
