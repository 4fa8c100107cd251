package driver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

var _ provider.FactsReader = (*Driver)(nil)

// Size is a size as GET /v2/sizes lists it (civogo v0.7.0's
// InstanceSize: the members the driver reads).
type Size struct {
	Type          string `json:"type"`
	Name          string `json:"name"`
	CPUCores      int    `json:"cpu_cores"`
	GPUCount      int    `json:"gpu_count"`
	RAMMegabytes  int    `json:"ram_mb"`
	DiskGigabytes int    `json:"disk_gb"`
	Selectable    bool   `json:"selectable"`
}

// Sizes lists the sizes of the client's region: instances', Kubernetes
// nodes' and others (GET /v2/sizes, civogo's ListInstanceSizes).
func (c *Client) Sizes(ctx context.Context) ([]Size, error) {
	var out []Size
	if err := c.do(ctx, http.MethodGet, "/v2/sizes", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ClusterFacts learns what Civo offers the cluster's pools: the cluster
// GET for its version, and GET /v2/sizes for the Kubernetes node sizes of
// its region (those whose names hold ".kube.", as the civo CLI picks
// them, and selectable), with their CPU cores, memory and GPUs. Two calls.
//
// Civo has no zones and no spot capacity: Zones are empty and every size
// is NoSpot. Its pools run the cluster's version, so PoolVersions is that
// version alone ("1.30.5" of Civo's "1.30.5-k3s1"); the versions new
// clusters may be made with (GET /v2/kubernetes/versions) are not what a
// pool may run, and are not read. A key that may not read the sizes (401,
// 403) leaves MachineTypes empty, said in Partial.
func (d *Driver) ClusterFacts(ctx context.Context, c *kpool.Cluster) (*kpool.ClusterFacts, error) {
	cl, id, err := d.client(c)
	if err != nil {
		return nil, err
	}
	cv, err := cl.Cluster(ctx, id)
	if err != nil {
		return nil, classify(err, "")
	}
	f := &kpool.ClusterFacts{LearnedAt: time.Now()}
	v := cv.Version
	if v == "" {
		v = cv.KubernetesVersion
	}
	if v = upstream(v); v != "" {
		f.Version, f.PoolVersions = v, []string{v}
	}
	sizes, err := cl.Sizes(ctx)
	var ae *APIError
	switch {
	case errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden):
		f.Partial = append(f.Partial, fmt.Sprintf("sizes not learnt: GET /v2/sizes in %s answered %d (%s)", cl.Region, ae.Status, ae.Code))
	case err != nil:
		return nil, classify(err, "")
	}
	for _, s := range sizes {
		if strings.Contains(s.Name, ".kube.") && s.Selectable {
			f.MachineTypes = append(f.MachineTypes, kpool.MachineType{Name: s.Name, CPUs: s.CPUCores, MemoryMiB: s.RAMMegabytes, GPUs: s.GPUCount, NoSpot: true})
		}
	}
	f.Sort()
	return f, nil
}

// upstream is the Kubernetes version of a Civo version: "1.30.5-k3s1" is
// "1.30.5" (a leading "v" and the distribution's suffix dropped).
func upstream(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	return v
}
