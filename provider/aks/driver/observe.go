package driver

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
)

// observe maps an agent pool to the neutral observed pool.
func observe(ap *armcontainerservice.AgentPool) provider.Pool {
	pr := ap.Properties
	if pr == nil {
		pr = &armcontainerservice.ManagedClusterAgentPoolProfileProperties{}
	}
	p := provider.Pool{
		PoolSpec: provider.PoolSpec{
			ProviderName: ptr.Deref(ap.Name, ""),
			MachineType:  ptr.Deref(pr.VMSize, ""),
			Count:        int(ptr.Deref(pr.Count, 0)),
			Autoscaling:  ptr.Deref(pr.EnableAutoScaling, false),
			MinCount:     int(ptr.Deref(pr.MinCount, 0)),
			MaxCount:     int(ptr.Deref(pr.MaxCount, 0)),
			Zones:        zonesOf(pr.AvailabilityZones),
			DiskSizeGB:   int(ptr.Deref(pr.OSDiskSizeGB, 0)),
			DiskType:     string(ptr.Deref(pr.OSDiskType, "")),
			Spot:         ptr.Deref(pr.ScaleSetPriority, "") == armcontainerservice.ScaleSetPrioritySpot,
			Labels:       map[string]string{},
			Tags:         map[string]string{},
			Version:      ptr.Deref(pr.OrchestratorVersion, ""),
			Mode:         kpool.ModeUser,
			Upgrade:      observedUpgrade(pr.UpgradeSettings),
		},
		ProviderState: ptr.Deref(pr.ProvisioningState, ""),
		Extra:         map[string]string{},
	}
	if ptr.Deref(pr.Mode, "") == armcontainerservice.AgentPoolModeSystem {
		p.Mode = kpool.ModeSystem
	}
	for k, v := range pr.NodeLabels {
		p.Labels[k] = ptr.Deref(v, "")
	}
	p.Name = p.Labels[provider.LabelPool]
	for _, t := range pr.NodeTaints {
		if tt, ok := parseTaint(ptr.Deref(t, "")); ok {
			p.Taints = append(p.Taints, tt)
		}
	}
	p.Taints = profile.NodeTaints(provider.PoolSpec{Taints: p.Taints, Spot: p.Spot})
	for k, v := range pr.Tags {
		p.Tags[k] = ptr.Deref(v, "")
	}
	p.Tags, p.Owner = provider.TagKeys.Take(p.Tags)
	p.Nodes = p.Count
	power := ""
	if pr.PowerState != nil && pr.PowerState.Code != nil {
		power = string(*pr.PowerState.Code)
		p.Extra["powerState"] = power
	}
	p.State = state(p.ProviderState)
	switch {
	case p.State == provider.StateReady && strings.EqualFold(power, string(armcontainerservice.CodeStopped)):
		// Provisioned, but its nodes are deallocated: not Ready, and
		// known to have none up. Nothing kpool does starts it.
		p.State = provider.StateUnknown
		p.Message = "agent pool " + p.ProviderName + " is stopped (powerState Stopped): its nodes are deallocated until it is started (az aks nodepool start)"
	case p.State == provider.StateReady:
		p.ReadyNodes = p.Count
		// ARM reports no per-zone counts; AKS balances a zonal pool's
		// scale set across its zones, so report that split.
		p.NodesByZone = provider.SpreadCount(p.Count, p.Zones)
	default:
		// ARM gives the target count as soon as an operation is accepted
		// and never how many nodes are up: while one runs (or after one
		// failed half way) the count of ready nodes is not known.
		p.ReadyUnknown = true
	}
	if p.ProviderState == "Canceled" {
		p.Message = "the last operation on agent pool " + p.ProviderName + " was canceled"
	}
	for k, v := range map[string]*string{"id": ap.ID, "nodeImageVersion": pr.NodeImageVersion,
		"currentOrchestratorVersion": pr.CurrentOrchestratorVersion, "eTag": pr.ETag} {
		if v != nil {
			p.Extra[k] = *v
		}
	}
	p.Problems = provider.CheckContract(&p)
	return p
}

// state maps AKS's provisioningState to the neutral state. Every state an
// operation in progress shows is busy (Creating, Updating or Deleting), so
// that the controllers wait for it; so is any other "-ing" state AKS may
// add. Canceled is Failed: the pool may be half-changed, and the
// controllers apply the spec again.
func state(s string) provider.State {
	if st := provider.StateOf(s, states); st != provider.StateUnknown || !strings.HasSuffix(s, "ing") {
		return st
	}
	return provider.StateUpdating
}

var states = provider.States{Ready: "Succeeded", Creating: "Creating", Deleting: "Deleting", Failed: "Failed Canceled",
	Updating: "Updating Scaling Upgrading UpgradingNodeImageVersion Starting Stopping Canceling Migrating Reconciling Accepted"}.Map()

// errorDetail is ARM's ErrorDetail: what AKS puts in an agent pool's
// properties.status.provisioningError (api-version 2025-05-01 on) and in a
// failed operation's status.
type errorDetail struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details []*errorDetail `json:"details"`
}

// String is "code: message (detail code: detail message; ...)".
func (e *errorDetail) String() string {
	if e == nil || e.Code == "" && e.Message == "" {
		return ""
	}
	out := e.Code
	if e.Message != "" {
		if out != "" {
			out += ": "
		}
		out += e.Message
	}
	var ds []string
	for _, d := range e.Details {
		if s := d.String(); s != "" {
			ds = append(ds, s)
		}
	}
	if len(ds) > 0 {
		out += " (" + strings.Join(ds, "; ") + ")"
	}
	return out
}

// provisioningErrors reads properties.status.provisioningError of each
// agent pool in a list page, by lower-case name. armcontainerservice v6
// (api-version 2025-02-01) has no such field; AKS sends it from
// 2025-05-01, so it is read from the page itself.
func provisioningErrors(raw *http.Response) map[string]*errorDetail {
	out := map[string]*errorDetail{}
	if raw == nil {
		return out
	}
	body, err := runtime.Payload(raw)
	if err != nil {
		return out
	}
	var page struct {
		Value []struct {
			Name       string `json:"name"`
			Properties struct {
				Status struct {
					ProvisioningError *errorDetail `json:"provisioningError"`
				} `json:"status"`
			} `json:"properties"`
		} `json:"value"`
	}
	if json.Unmarshal(body, &page) != nil {
		return out
	}
	for _, v := range page.Value {
		if e := v.Properties.Status.ProvisioningError; e.String() != "" {
			out[strings.ToLower(v.Name)] = e
		}
	}
	return out
}

// opRecord is the last operation the driver started on a pool: its status
// URL (Azure-AsyncOperation), and why it failed once that is read.
type opRecord struct {
	url    string
	failed *errorDetail
	read   bool // the status was read for good: no need to ask again
}

// opKey names a pool across clusters and endpoints.
func opKey(c *kpool.Cluster, pool string) string {
	a := c.Spec.Platform.Azure
	return strings.ToLower(c.Spec.Endpoint + " " + a.SubscriptionID + "/" + a.ResourceGroup + "/" + a.ClusterName + "/" + pool)
}

// started keeps the status URL of the operation an accepted PUT or DELETE
// started on a pool, replacing the last one's.
func (d *Driver) started(c *kpool.Cluster, pool string, raw *http.Response) {
	if raw == nil {
		return
	}
	u := raw.Header.Get("Azure-AsyncOperation")
	if u == "" {
		u = raw.Header.Get("Location")
	}
	if u == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ops.Add(opKey(c, pool), &opRecord{url: u})
}

// explain puts in a failed pool's Message why it failed: the pool's own
// provisioningError when AKS sends it, else the error of the operation
// the driver started last on it (read once, then kept), else what is
// known. Reading the operation is best effort: a list does not fail for it.
// It returns that error; nil when none is known.
func (d *Driver) explain(ctx context.Context, cs *clients, key string, p *provider.Pool, fromPool *errorDetail) *errorDetail {
	if fromPool != nil {
		p.Message = fromPool.String()
		return fromPool
	}
	d.mu.Lock()
	rec, ok := d.ops.Get(key)
	var u string
	var failed *errorDetail
	read := false
	if ok {
		u, failed, read = rec.url, rec.failed, rec.read
	}
	d.mu.Unlock()
	if !read && u != "" {
		if failed, read = operationError(ctx, cs.pl, u); read {
			d.mu.Lock()
			if cur, ok := d.ops.Get(key); ok && cur.url == u {
				cur.failed, cur.read = failed, true
			}
			d.mu.Unlock()
		}
	}
	switch {
	case failed != nil:
		p.Message = failed.String()
	case p.Message == "":
		p.Message = "the last operation on agent pool " + p.ProviderName + " failed; AKS gives no reason in api-version " +
			apiVersion + " unless the operation is known (see the cluster's activity log)"
	}
	return failed
}

// apiVersion is what armcontainerservice v6.6.0 sends.
const apiVersion = "2025-02-01"

// operationError reads an operation's status and returns its error.
// final is false when asking again may tell more (no answer, a 5xx, the
// operation still running); true with nil when it never will (ARM forgot
// the operation, or it did not fail).
func operationError(ctx context.Context, pl runtime.Pipeline, u string) (failed *errorDetail, final bool) {
	req, err := runtime.NewRequest(ctx, http.MethodGet, u)
	if err != nil {
		return nil, true
	}
	resp, err := pl.Do(req)
	if err != nil {
		return nil, false
	}
	body, err := runtime.Payload(resp)
	switch {
	case err != nil, resp.StatusCode >= 500, resp.StatusCode == http.StatusTooManyRequests:
		return nil, false
	case resp.StatusCode != http.StatusOK:
		return nil, true
	}
	var st struct {
		Status string       `json:"status"`
		Error  *errorDetail `json:"error"`
	}
	switch {
	case json.Unmarshal(body, &st) != nil:
		return nil, true
	case st.Status == "InProgress":
		return nil, false
	case st.Status != "Failed" && st.Status != "Canceled":
		return nil, true
	}
	if st.Error.String() != "" {
		return st.Error, true
	}
	return &errorDetail{Message: "the operation ended " + st.Status}, true
}
