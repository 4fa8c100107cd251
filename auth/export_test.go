package auth

import "time"

// SetAccessClock sets the clock an Access checks expiry and last use by.
func SetAccessClock(a *Access, now func() time.Time) { a.now = now }
