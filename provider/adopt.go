package provider

import (
	"fmt"
	"strings"

	"github.com/kpool/kpool"
)

// What a driver does when the pool it is to create or change is already
// at the provider. Which fields only a new pool can change is the
// profile's capability table (Capabilities.Updates), the one the API plans
// changes with, so that the API's answer and the driver's refusal cannot
// drift apart; which fields differ is Compare, the one the controllers
// see drift with.

// Adopt answers a create for a pool that exists at the provider (got, as
// the driver lists it; want is the create's spec): refused when another
// owner marked it (KindForeign); a validation error on the field where
// they differ in one only a new pool can change (Refuse); ErrAlreadyExists
// when they differ in one an update can change, for the caller to update;
// got itself when they match. also are differences the driver sees beyond
// Compare's (settings the neutral spec does not carry).
func Adopt(p Profile, want PoolSpec, got *Pool, also ...Difference) (*Pool, error) {
	if Foreign(got, want.Owner) {
		return nil, ForeignError(p.Type(), got.ProviderName, got.Owner)
	}
	diffs := append(Compare(p, want, got), also...)
	if err := refuse(p, got.ProviderName, diffs); err != nil {
		return nil, err
	}
	if len(diffs) > 0 {
		fields := make([]string, len(diffs))
		for i, d := range diffs {
			fields[i] = string(d.Field)
		}
		return nil, &Error{Kind: KindAlreadyExists, Provider: p.Type(),
			Reason: fmt.Sprintf("%s %s exists with other %s; update it", p.CLI().PoolNoun, got.ProviderName, strings.Join(fields, ", "))}
	}
	return got, nil
}

// Refuse returns a validation error on the first field where got differs
// from want that, by the profile's capability table, only a new pool can
// change (nil when there is none): what a driver answers an update that
// asks for one, before sending anything.
func Refuse(p Profile, want PoolSpec, got *Pool) error {
	return refuse(p, got.ProviderName, Compare(p, want, got))
}

func refuse(p Profile, name string, diffs []Difference) error {
	caps := p.Capabilities()
	for _, d := range diffs {
		if r := caps.Updates[d.Field]; r.Class == kpool.UpdateReplace {
			return ValidationError(p.Type(), d.Path, "%s %s has %s and %s cannot change it to %s in place (%s); create a new pool",
				p.CLI().PoolNoun, name, d.Got, caps.Name, d.Want, r.Reason)
		}
	}
	return nil
}
