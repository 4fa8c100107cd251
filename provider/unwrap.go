package provider

// Unwrapper is a driver that decorates another one (metrics, rate limits):
// Unwrap returns the driver it wraps, so that callers can still reach that
// driver's optional interfaces (what a driver offers beyond Driver)
// through the decorators.
type Unwrapper interface {
	Unwrap() Driver
}

// As returns the first driver in d's chain of decorators, d itself first,
// that implements T, following Unwrap; ok is false when none does. It is
// how a caller holding a decorated driver reaches an optional interface.
func As[T any](d Driver) (t T, ok bool) {
	for d != nil {
		if t, ok := d.(T); ok {
			return t, true
		}
		u, ok := d.(Unwrapper)
		if !ok {
			break
		}
		d = u.Unwrap()
	}
	return t, false
}
