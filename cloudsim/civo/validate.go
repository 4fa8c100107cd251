package civo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kpool/kpool/cloudsim/sim"
)

// poolRequest is the body of a POST or PUT (civogo's
// KubernetesClusterPoolUpdateConfig): a member left out is nil, so that
// a PUT changes only what it sends.
type poolRequest struct {
	ID               string            `json:"id"`
	Count            *int              `json:"count"`
	Size             string            `json:"size"`
	Labels           map[string]string `json:"labels"`
	Taints           *[]Taint          `json:"taints"`
	PublicIPNodePool *bool             `json:"public_ip_node_pool"`
	Region           string            `json:"region"`
}

// decode reads a POST or PUT body.
func decode(req *sim.Request) (*poolRequest, *sim.Reply) {
	if len(bytes.TrimSpace(req.Body)) == 0 {
		return nil, failf(http.StatusBadRequest, codeParameterInvalid, "The request body is empty")
	}
	var in poolRequest
	if err := json.Unmarshal(req.Body, &in); err != nil {
		return nil, failf(http.StatusBadRequest, codeParameterInvalid, "The request body could not be decoded: %v", err)
	}
	return &in, nil
}

// Limits of the emulator's own: Civo documents none for labels and
// taints; these keep a request's size sane.
const (
	maxLabels = 100
	maxTaints = 50
)

var effects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}

func validateCreate(in *poolRequest) *sim.Reply {
	// A pool id is what Civo's clients let through (the Terraform
	// provider: letters, digits, '-', '_', '.'; the CLI: under 64
	// characters) and the value of the label Civo puts on the pool's
	// nodes: a Kubernetes label value.
	errs := validation.IsValidLabelValue(in.ID)
	switch {
	case in.ID == "" || len(errs) > 0:
		return failf(http.StatusBadRequest, codeNameInvalid, "The pool id %q is invalid: 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit", in.ID)
	case in.Size == "":
		return failf(http.StatusBadRequest, codeSizeMissing, "The size of the pool's nodes is required")
	case in.Count == nil:
		return failf(http.StatusBadRequest, codeParameterInvalid, "count is required: the number of nodes in the pool")
	}
	if rep := checkSize(in.Size); rep != nil {
		return rep
	}
	return checkMutable(in, "")
}

// checkSize refuses a size that is not one of the catalogue's Kubernetes
// sizes (the sizes GET /v2/sizes serves, sizes.go), as Civo does.
func checkSize(s string) *sim.Reply {
	if _, ok := sizes[s]; !ok {
		return detailed(http.StatusBadRequest, codeSizeNotFound, reasonSizeNotFound, fmt.Sprintf("%q is not a Civo Kubernetes node size (such as g4s.kube.medium)", s))
	}
	return nil
}

// validateUpdate checks a PUT: the size and public IP setting are the
// pool's for good.
func validateUpdate(p *pool, in *poolRequest) *sim.Reply {
	if in.Size != "" && in.Size != p.size {
		return failf(http.StatusBadRequest, codeParameterInvalid, "The size of pool %s cannot be changed from %s to %s: create a new pool", p.id, p.size, in.Size)
	}
	if in.PublicIPNodePool != nil && *in.PublicIPNodePool != p.publicIP {
		return failf(http.StatusBadRequest, codeParameterInvalid, "public_ip_node_pool of pool %s cannot be changed: create a new pool", p.id)
	}
	return checkMutable(in, p.id)
}

// checkMutable checks the count, labels and taints of a request.
func checkMutable(in *poolRequest, id string) *sim.Reply {
	if id == "" {
		id = in.ID
	}
	if in.Count != nil && *in.Count < 1 {
		return failf(http.StatusBadRequest, codeParameterInvalid, "count must be at least 1, got %d", *in.Count)
	}
	if len(in.Labels) > maxLabels {
		return failf(http.StatusBadRequest, codeLabelInvalid, "at most %d labels, got %d", maxLabels, len(in.Labels))
	}
	for k, v := range in.Labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return failf(http.StatusBadRequest, codeLabelInvalid, "label key %q is invalid: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return failf(http.StatusBadRequest, codeLabelInvalid, "label %s value %q is invalid: %s", k, v, strings.Join(errs, "; "))
		}
		if reserved(k) && !(k == PoolLabel && v == id) {
			return failf(http.StatusBadRequest, codeLabelInvalid, "label %s is reserved: Civo sets the labels of kubernetes.civo.com", k)
		}
	}
	if in.Taints == nil {
		return nil
	}
	if len(*in.Taints) > maxTaints {
		return failf(http.StatusBadRequest, codeParameterInvalid, "at most %d taints, got %d", maxTaints, len(*in.Taints))
	}
	seen := map[string]bool{}
	for i, t := range *in.Taints {
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return failf(http.StatusBadRequest, codeParameterInvalid, "taints[%d]: key %q is invalid: %s", i, t.Key, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
			return failf(http.StatusBadRequest, codeParameterInvalid, "taints[%d]: value %q is invalid: %s", i, t.Value, strings.Join(errs, "; "))
		}
		if !slices.Contains(effects, t.Effect) {
			return failf(http.StatusBadRequest, codeParameterInvalid, "taints[%d]: effect %q is not one of %s", i, t.Effect, strings.Join(effects, ", "))
		}
		if reserved(t.Key) {
			return failf(http.StatusBadRequest, codeParameterInvalid, "taints[%d]: taint %s is reserved", i, t.Key)
		}
		if seen[t.Key+":"+t.Effect] {
			return failf(http.StatusBadRequest, codeParameterInvalid, "taints[%d]: %s:%s is given twice", i, t.Key, t.Effect)
		}
		seen[t.Key+":"+t.Effect] = true
	}
	return nil
}

func reserved(k string) bool {
	prefix, _, ok := strings.Cut(k, "/")
	return ok && (prefix == "kubernetes.civo.com" || strings.HasSuffix(prefix, ".kubernetes.civo.com"))
}
