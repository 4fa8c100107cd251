package provider

import (
	"fmt"
	"maps"
	"strings"

	"github.com/kpool/kpool"
)

// Owner is the mark kpool puts at the cloud on every pool it creates: the
// kpool installation (Store.InstallationID, 32 lowercase hex characters)
// and the kpool pool (its id, a UUID) the pool belongs to. Two kpool
// installations sharing a cloud account, or two registrations of one
// cluster, tell their pools apart by it: the controllers never adopt,
// change or delete a pool whose mark is not their own pool's. A PoolSpec
// carries the mark a driver is to write; a Pool the mark the provider
// reports. The zero Owner is no mark: a pool made outside kpool, or by a
// kpool from before marks.
type Owner struct {
	Installation string
	Pool         string
}

// IsZero reports whether o is no mark at all.
func (o Owner) IsZero() bool { return o == Owner{} }

// String names the mark as people read it: "kpool installation 1f…e0,
// pool 0195…".
func (o Owner) String() string {
	if o.IsZero() {
		return "no owner's mark"
	}
	s := "kpool installation " + o.Installation
	if o.Installation == "" {
		s = "kpool installation (none named)"
	}
	if o.Pool != "" {
		s += ", pool " + o.Pool
	}
	return s
}

// MarkKeys are the two keys a mark is written under on one kind of
// carrier (a pool's cloud tags, or its node labels).
type MarkKeys struct{ Installation, Pool string }

var (
	// TagKeys carry the mark in a pool's cloud resource tags: AKS agent
	// pool tags, EKS node group tags, GKE node pool resourceLabels, OKE
	// node pool freeformTags. Lowercase letters and '-', starting with a
	// letter, fit the strictest of them, GKE's label keys (1-63 lowercase
	// letters, digits, '_' or '-', starting with a letter:
	// https://cloud.google.com/compute/docs/labeling-resources#requirements),
	// and so Azure's (no <, >, %, &, \, ?, /:
	// https://learn.microsoft.com/azure/azure-resource-manager/management/tag-resources#limitations),
	// AWS's (letters, digits, spaces and _ . : / = + - @, not aws:;
	// https://docs.aws.amazon.com/eks/latest/userguide/eks-using-tags.html)
	// and OCI's freeform tag keys (no spaces or periods). Their values, 32
	// hex digits and a 36-character UUID, fit every cloud's value rules
	// (GKE's 63 lowercase letters, digits, '_' and '-' the strictest).
	TagKeys = MarkKeys{Installation: "kpool-installation", Pool: "kpool-pool"}
	// LabelKeys carry the mark in a pool's node labels, in kpool's own
	// label domain (which users may not set), on a provider whose pools
	// carry no tags (Civo: a pool is its size, count, labels, taints and
	// public IPs).
	LabelKeys = MarkKeys{Installation: "kompox.dev/owner-installation", Pool: "kompox.dev/owner-pool"}
)

// Has reports whether key is one of the mark's keys. Tags are compared
// without case: Azure's tag names are case-insensitive.
func (k MarkKeys) Has(key string) bool {
	return strings.EqualFold(key, k.Installation) || strings.EqualFold(key, k.Pool)
}

// Put returns a copy of m with o written into it (only the copy when o is
// no mark). m may be nil.
func (k MarkKeys) Put(m map[string]string, o Owner) map[string]string {
	out := make(map[string]string, len(m)+2)
	maps.Copy(out, m)
	if o.IsZero() {
		return out
	}
	out[k.Installation] = o.Installation
	if o.Pool != "" {
		out[k.Pool] = o.Pool
	}
	return out
}

// Take splits what a provider reports into the mark and the rest: a copy
// of m without the mark's keys, and the mark (zero when m has none).
func (k MarkKeys) Take(m map[string]string) (map[string]string, Owner) {
	out := make(map[string]string, len(m))
	var o Owner
	for key, v := range m {
		switch {
		case key == k.Installation:
			o.Installation = v
		case key == k.Pool:
			o.Pool = v
		default:
			out[key] = v
		}
	}
	return out, o
}

// Remark returns the mark an update writes on a pool that has have, asked
// for want: want on an unmarked pool (a pool kpool adopted before marks
// existed), and the mark it has when that is want. A pool marked by
// another owner (or marked at all, for a caller without a mark) is never
// written: a KindForeign error naming the mark.
func Remark(t kpool.PlatformType, providerName string, have, want Owner) (Owner, error) {
	switch {
	case have.IsZero():
		return want, nil
	case have == want:
		return have, nil
	}
	return Owner{}, ForeignError(t, providerName, have)
}

// ForeignError is a driver's refusal to adopt, change or delete a pool
// that carries another owner's mark o.
func ForeignError(t kpool.PlatformType, providerName string, o Owner) *Error {
	return &Error{Kind: KindForeign, Provider: t,
		Reason: fmt.Sprintf("pool %s carries the mark of %s: another kpool owns it, and kpool never adopts, changes or deletes it", providerName, o)}
}

// Foreign reports whether a pool the provider reports belongs to another
// owner than want: it carries a mark, and not want's. With no mark of its
// own (want zero) every marked pool is foreign.
func Foreign(got *Pool, want Owner) bool {
	return got != nil && !got.Owner.IsZero() && got.Owner != want
}
