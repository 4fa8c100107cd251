package driver

import (
	"context"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/provider"
)

// OKE explains failed work through the work request, not the node pool: a
// FAILED or NEEDS_ATTENTION pool's lifecycleDetails may say little, while
// its failed work request's errors (ListWorkRequestErrors) carry OCI's
// code and message. The driver reports those.

// explain puts on a failed pool (FAILED, NEEDS_ATTENTION) the errors of
// its newest failed work request, as "code: message; ...", keeping OKE's
// lifecycleDetails in Extra. A lookup that fails leaves the pool as it is:
// the explanation is worth a call, not a failed list.
func (d *Driver) explain(ctx context.Context, cn *conn, p *provider.Pool, np *ce.NodePool) {
	switch np.LifecycleState {
	case ce.NodePoolLifecycleStateFailed, ce.NodePoolLifecycleStateNeedsAttention:
	default:
		return
	}
	id, why, err := d.failure(ctx, cn, ptr.Deref(np.Id, ""))
	if err != nil || why == "" {
		return
	}
	if p.Message != "" {
		p.Extra["lifecycleDetails"] = p.Message
	}
	p.Message = "work request " + id + " failed: " + why
	p.Extra["failedWorkRequest"] = id
}

// failure returns a node pool's newest failed work request and its errors
// ("" when it has none). A failed work request never changes, so its
// errors are kept, by its id.
func (d *Driver) failure(ctx context.Context, cn *conn, poolID string) (id, why string, err error) {
	list, err := cn.cl.ListWorkRequests(provider.Detached(ctx), ce.ListWorkRequestsRequest{CompartmentId: common.String(cn.oci.CompartmentID),
		ClusterId: common.String(cn.oci.ClusterID), ResourceId: common.String(poolID), ResourceType: ce.ListWorkRequestsResourceTypeNodepool,
		Status: []string{string(ce.WorkRequestStatusFailed)}, SortBy: ce.ListWorkRequestsSortByTimeAccepted, SortOrder: ce.ListWorkRequestsSortOrderDesc,
		Limit: common.Int(1)})
	if err != nil {
		return "", "", classify(err, list.RawResponse, "")
	}
	if len(list.Items) == 0 || list.Items[0].Id == nil {
		return "", "", nil
	}
	id = *list.Items[0].Id
	if why, ok := d.failures.Get(id); ok {
		return id, why, nil
	}
	errs, err := cn.cl.ListWorkRequestErrors(provider.Detached(ctx), ce.ListWorkRequestErrorsRequest{CompartmentId: common.String(cn.oci.CompartmentID),
		WorkRequestId: common.String(id)})
	if err != nil {
		return "", "", classify(err, errs.RawResponse, "")
	}
	var parts []string
	for _, e := range errs.Items {
		parts = append(parts, ptr.Deref(e.Code, "")+": "+provider.FirstLine(ptr.Deref(e.Message, "")))
	}
	why = strings.Join(parts, "; ")
	d.failures.Add(id, why)
	return id, why, nil
}
