package oke

import (
	"strings"

	"github.com/kpool/kpool/cloudsim/sim"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"
)

func checkLabels(kvs []ce.KeyValue) *sim.Reply {
	seen := map[string]bool{}
	for _, kv := range kvs {
		k, v := ptr.Deref(kv.Key, ""), ptr.Deref(kv.Value, "")
		if len(k) > 316 || !labelKeyRE.MatchString(k) {
			return invalid("initialNodeLabels: %q is not a valid Kubernetes label key.", k)
		}
		if !labelValueRE.MatchString(v) {
			return invalid("initialNodeLabels: the value %q of %s is not a valid Kubernetes label value.", v, k)
		}
		if seen[k] {
			return invalid("initialNodeLabels: %s is given twice.", k)
		}
		seen[k] = true
	}
	return nil
}

// checkTags applies OCI's rules of free-form tags ("Limits on Tags",
// https://docs.oracle.com/iaas/Content/Tagging/Concepts/taggingoverview.htm):
// keys of 1-100 characters without periods or spaces, values of at most
// 256; and the emulator's bound of 64 a resource.
func checkTags(field string, tags map[string]string) *sim.Reply {
	if len(tags) > 64 {
		return invalid("%s: at most 64 freeform tags, got %d.", field, len(tags))
	}
	for k, v := range tags {
		if k == "" || len(k) > 100 || strings.ContainsAny(k, " .\t\n") {
			return invalid("%s: %q is not a valid tag key (1-100 characters, no spaces or periods).", field, k)
		}
		if len(v) > 256 {
			return invalid("%s: the value of %s is longer than 256 characters.", field, k)
		}
	}
	return nil
}
