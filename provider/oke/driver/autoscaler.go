package driver

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/provider"
)

// OKE node pools have no autoscaling bounds: OKE's Cluster Autoscaler
// add-on holds them, cluster-wide, in its nodes configuration, a
// comma-separated list of MIN:MAX:NODEPOOL_OCID (docs: "Cluster Autoscaler"
// configuration arguments). The driver writes a pool's entry, and only
// its own: every other entry (another pool's, one a person wrote) and
// every other key is sent back as it was read, under the etag it was read
// with, so a change made meanwhile fails the write (412) and the write is
// made again on what is there now.

// AutoscalerAddon is the name of OKE's Cluster Autoscaler add-on.
const AutoscalerAddon = "ClusterAutoscaler"

// nodesKey is the add-on's configuration key of the pools' bounds.
const nodesKey = "nodes"

// maxNodesLength is the longest nodes value OKE takes: an add-on
// configuration's value is 1-255 characters (the API reference's
// AddonConfiguration), room for two or three pools' entries.
const maxNodesLength = 255

// boundsTries is how often a write whose etag went stale is made again
// before the conflict is left to the controllers.
const boundsTries = 4

// bounds is a pool's entry; nil is none.
type bounds struct{ min, max int }

// autoscaler is the add-on as read: its configurations and etag; nil when
// the cluster has none.
type autoscaler struct {
	addon ce.Addon
	etag  string
}

// readAutoscaler reads the cluster's Cluster Autoscaler add-on; (nil, nil)
// when it is not installed.
func (cn *conn) readAutoscaler(ctx context.Context) (*autoscaler, error) {
	resp, err := cn.cl.GetAddon(provider.Detached(ctx), ce.GetAddonRequest{ClusterId: common.String(cn.oci.ClusterID), AddonName: common.String(AutoscalerAddon)})
	if err != nil {
		if status(err) == http.StatusNotFound {
			return nil, nil
		}
		return nil, classify(err, resp.RawResponse, "spec.autoscaling")
	}
	return &autoscaler{addon: resp.Addon, etag: ptr.Deref(resp.Etag, "")}, nil
}

// nodes is the add-on's nodes value.
func (a *autoscaler) nodes() string {
	if a == nil {
		return ""
	}
	for _, c := range a.addon.Configurations {
		if ptr.Deref(c.Key, "") == nodesKey {
			return ptr.Deref(c.Value, "")
		}
	}
	return ""
}

// entries returns the bounds of each pool in a nodes value, by OCID;
// parts that are not MIN:MAX:OCID are skipped (and kept by withEntry).
func entries(nodes string) map[string]bounds {
	out := map[string]bounds{}
	for _, part := range strings.Split(nodes, ",") {
		f := strings.SplitN(strings.TrimSpace(part), ":", 3)
		if len(f) != 3 {
			continue
		}
		lo, err1 := strconv.Atoi(f[0])
		hi, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil {
			out[f[2]] = bounds{lo, hi}
		}
	}
	return out
}

// withEntry returns nodes with the pool's entry set to b (removed when b
// is nil), every other part as it was, in its place.
func withEntry(nodes, pool string, b *bounds) string {
	var out []string
	done := false
	for _, part := range strings.Split(nodes, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if f := strings.SplitN(part, ":", 3); len(f) == 3 && f[2] == pool {
			if b != nil && !done {
				out = append(out, fmt.Sprintf("%d:%d:%s", b.min, b.max, pool))
			}
			done = true
			continue
		}
		out = append(out, part)
	}
	if b != nil && !done {
		out = append(out, fmt.Sprintf("%d:%d:%s", b.min, b.max, pool))
	}
	return strings.Join(out, ",")
}

// setBounds makes the add-on's entry of a pool b (nil: none): a read, the
// entry changed, a write under the etag read (InstallAddon when the
// cluster has no add-on yet and b is set); a stale etag reads again. An
// add-on that a work request holds is KindTransient: the controllers
// come back.
func (cn *conn) setBounds(ctx context.Context, pool string, b *bounds) error {
	for try := 1; ; try++ {
		a, err := cn.readAutoscaler(ctx)
		if err != nil {
			return err
		}
		have, ok := entries(a.nodes())[pool]
		next := withEntry(a.nodes(), pool, b)
		switch {
		case b == nil && !ok, b != nil && ok && have == *b:
			return nil
		case len(next) > maxNodesLength:
			return &provider.Error{Kind: provider.KindQuota, Provider: platform, Field: "spec.autoscaling",
				Reason: fmt.Sprintf("OKE's Cluster Autoscaler add-on holds every pool's bounds in one nodes value of at most %d characters, "+
					"and this pool's entry does not fit beside the %d there; turn autoscaling off on another pool of the cluster, or give this one a fixed nodeCount",
					maxNodesLength, len(entries(a.nodes())))}
		case a == nil:
			err = cn.installAutoscaler(ctx, next)
		default:
			err = cn.updateAutoscaler(ctx, a, next)
		}
		switch {
		case err == nil || !staleAddon(err):
			return err
		case try == boundsTries:
			return err.(errStale).error
		}
	}
}

func (cn *conn) installAutoscaler(ctx context.Context, nodes string) error {
	resp, err := cn.cl.InstallAddon(provider.Detached(ctx), ce.InstallAddonRequest{ClusterId: common.String(cn.oci.ClusterID),
		InstallAddonDetails: ce.InstallAddonDetails{AddonName: common.String(AutoscalerAddon),
			Configurations: []ce.AddonConfiguration{{Key: common.String(nodesKey), Value: common.String(nodes)}}}})
	if err != nil {
		return addonError(err, resp.RawResponse)
	}
	return nil
}

// updateAutoscaler writes nodes into the add-on's configurations, every
// other key as read; no entries left is no nodes key (a value is never
// empty).
func (cn *conn) updateAutoscaler(ctx context.Context, a *autoscaler, nodes string) error {
	configs := []ce.AddonConfiguration{}
	found := false
	for _, c := range a.addon.Configurations {
		if ptr.Deref(c.Key, "") == nodesKey {
			found = true
			if nodes == "" {
				continue
			}
			c = ce.AddonConfiguration{Key: common.String(nodesKey), Value: common.String(nodes)}
		}
		configs = append(configs, c)
	}
	if !found && nodes != "" {
		configs = append(configs, ce.AddonConfiguration{Key: common.String(nodesKey), Value: common.String(nodes)})
	}
	req := ce.UpdateAddonRequest{ClusterId: common.String(cn.oci.ClusterID), AddonName: common.String(AutoscalerAddon),
		UpdateAddonDetails: ce.UpdateAddonDetails{Configurations: configs}}
	if a.etag != "" {
		req.IfMatch = common.String(a.etag)
	}
	resp, err := cn.cl.UpdateAddon(provider.Detached(ctx), req)
	if err != nil {
		return addonError(err, resp.RawResponse)
	}
	return nil
}

// errStale marks a write that lost a race: the etag went stale, or the
// add-on was installed meanwhile.
type errStale struct{ error }

func (e errStale) Unwrap() error { return e.error }

func staleAddon(err error) bool {
	_, ok := err.(errStale)
	return ok
}

// addonError classifies an add-on write's error: 412 (etag stale) and 409
// NotAuthorizedOrResourceAlreadyExists (installed meanwhile) are tried
// again at once; 409 IncorrectState (a work request holds the add-on)
// is transient.
func addonError(err error, resp *http.Response) error {
	e := classify(err, resp, "spec.autoscaling")
	se, ok := common.IsServiceError(err)
	if ok && (se.GetHTTPStatusCode() == http.StatusPreconditionFailed ||
		(se.GetHTTPStatusCode() == http.StatusConflict && se.GetCode() == "NotAuthorizedOrResourceAlreadyExists")) {
		return errStale{e}
	}
	if pe, ok := e.(*provider.Error); ok && pe.Kind == provider.KindTransient {
		pe.Reason = "OKE's Cluster Autoscaler add-on is busy: " + pe.Reason
	}
	return e
}

// observeBounds sets the autoscaling bounds of listed pools from the
// add-on's entries (by each pool's OCID).
func observeBounds(pools []provider.Pool, a *autoscaler) {
	if a == nil {
		return
	}
	es := entries(a.nodes())
	for i := range pools {
		if b, ok := es[pools[i].Extra["id"]]; ok {
			pools[i].Autoscaling, pools[i].MinCount, pools[i].MaxCount = true, b.min, b.max
		}
	}
}

// wantBounds is the entry a spec asks for.
func wantBounds(s provider.PoolSpec) *bounds {
	if !s.Autoscaling {
		return nil
	}
	return &bounds{s.MinCount, s.MaxCount}
}
