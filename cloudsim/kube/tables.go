package kube

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// tableDef is how the API server prints a kind as a Table: its columns
// and one row's cells, from kubernetes pkg/printers/internalversion/
// printers.go (the server prints every column, the wide ones too, and
// kubectl shows those of priority 0 unless -o wide).
type tableDef struct {
	columns []metav1.TableColumnDefinition
	row     func(o object) metav1.TableRow
}

var (
	nameCol = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]}
	ageCol  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]}
	info    = corev1.NodeSystemInfo{}.SwaggerDoc()
	addrDoc = corev1.NodeStatus{}.SwaggerDoc()["addresses"]
)

// tables are the kinds printed as Tables: printers.go's nodeColumnDefinitions,
// podColumnDefinitions, podDisruptionBudgetColumnDefinitions and
// deploymentColumnDefinitions.
var tables = map[*resource]tableDef{
	nodeRes: {columns: []metav1.TableColumnDefinition{nameCol,
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		ageCol,
		{Name: "Version", Type: "string", Description: info["kubeletVersion"]},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: addrDoc},
		{Name: "External-IP", Type: "string", Priority: 1, Description: addrDoc},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: info["osImage"]},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: info["kernelVersion"]},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: info["containerRuntimeVersion"]},
	}, row: nodeRow},
	podRes: {columns: []metav1.TableColumnDefinition{nameCol,
		{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
		{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
		{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
		ageCol,
		{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
		{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
		{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
	}, row: podRow},
	pdbRes: {columns: []metav1.TableColumnDefinition{nameCol,
		{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
		{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
		{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
		ageCol,
	}, row: pdbRow},
	depRes: {columns: []metav1.TableColumnDefinition{nameCol,
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		{Name: "Up-to-date", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]},
		{Name: "Available", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]},
		ageCol,
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
		{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]},
	}, row: deploymentRow},
}

// tableVersion returns the meta.k8s.io version of the Table a request's
// Accept header asks for ("v1" or "v1beta1"), or "" when its first media
// range the server can answer is not a Table (kubectl get lists
// application/json;as=Table;v=v1;g=meta.k8s.io first, then plain JSON;
// another as=, such as PartialObjectMetadata, is skipped).
func tableVersion(r *http.Request) string {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		as, ok := params["as"]
		switch {
		case !ok:
			return ""
		case as == "Table" && params["g"] == "meta.k8s.io" && (params["v"] == "v1" || params["v"] == "v1beta1") && mt == "application/json":
			return params["v"]
		}
	}
	return ""
}

// includeObject is a Table request's includeObject: Metadata (the
// default), Object or None; another value is 400, as the API server
// answers it.
func includeObject(r *http.Request) (metav1.IncludeObjectPolicy, error) {
	include := metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject"))
	switch include {
	case "":
		return metav1.IncludeMetadata, nil
	case metav1.IncludeMetadata, metav1.IncludeObject, metav1.IncludeNone:
		return include, nil
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", include))
}

// writeTable answers a list or get as a Table of items.
func writeTable(w http.ResponseWriter, r *http.Request, version string, res *resource, items []object, rv string) {
	include, err := includeObject(r)
	if err != nil {
		writeStatus(w, err)
		return
	}
	writeJSON(w, http.StatusOK, toTable(version, include, res, items, rv, true))
}

// toTable is the Table of items: the kind's columns (when headers is
// set: a watch sends them with its first event only), a row per item,
// and each row's object as include says (Metadata: a
// PartialObjectMetadata; Object: the object; None: none), as the API
// server's asTable (k8s.io/apiserver pkg/endpoints/handlers/response.go)
// makes it.
func toTable(version string, include metav1.IncludeObjectPolicy, res *resource, items []object, rv string, headers bool) *metav1.Table {
	def := tables[res]
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/" + version},
		ListMeta: metav1.ListMeta{ResourceVersion: rv}, Rows: []metav1.TableRow{}}
	if headers {
		t.ColumnDefinitions = def.columns
	}
	for _, o := range items {
		row := def.row(o)
		var v any
		switch include {
		case metav1.IncludeObject:
			o.GetObjectKind().SetGroupVersionKind(res.gvk)
			v = o
		case metav1.IncludeMetadata:
			p := meta.AsPartialObjectMetadata(o)
			p.TypeMeta = metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/" + version}
			v = p
		}
		if v != nil {
			row.Object = runtime.RawExtension{Raw: mustJSON(v)}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // API types always marshal
	}
	return b
}

// age is printers.go's translateTimestampSince.
func age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

// nodeRow is printers.go's printNode: STATUS is Ready or NotReady (Unknown
// without the condition), then SchedulingDisabled when cordoned; ROLES
// are the node-role.kubernetes.io/<role> labels and kubernetes.io/role's
// value, sorted, or <none>.
func nodeRow(o object) metav1.TableRow {
	n := o.(*corev1.Node)
	status := []string{"Unknown"}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			status[0] = "NotReady"
			if c.Status == corev1.ConditionTrue {
				status[0] = "Ready"
			}
		}
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	var roles []string
	for k, v := range n.Labels {
		if role, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && role != "" {
			roles = append(roles, role)
		} else if k == "kubernetes.io/role" && v != "" {
			roles = append(roles, v)
		}
	}
	slices.Sort(roles)
	roles = slices.Compact(roles)
	ni := n.Status.NodeInfo
	return metav1.TableRow{Cells: []any{n.Name, strings.Join(status, ","), orNone(strings.Join(roles, ",")), age(n.CreationTimestamp), ni.KubeletVersion,
		nodeAddress(n, corev1.NodeInternalIP), nodeAddress(n, corev1.NodeExternalIP), orUnknown(ni.OSImage), orUnknown(ni.KernelVersion), orUnknown(ni.ContainerRuntimeVersion)}}
}

// nodeAddress is printers.go's getNodeInternalIP/getNodeExternalIP: the
// first address of the type, or <none>.
func nodeAddress(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

// podRow is printers.go's printPod for pods without init containers:
// READY counts the containers ready and running of all; STATUS is the
// phase (or status.reason), then a container's waiting or terminated
// reason ("ExitCode:N" without one), "Completed" turned back to Running
// (or NotReady) while a container still runs; RESTARTS adds "(AGE ago)"
// of the last termination; a Succeeded or Failed pod's row is Completed.
func podRow(o object) metav1.TableRow {
	p := o.(*corev1.Pod)
	reason := string(p.Status.Phase)
	if p.Status.Reason != "" {
		reason = p.Status.Reason
	}
	row := metav1.TableRow{}
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		row.Conditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	case corev1.PodFailed:
		row.Conditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
	}
	restarts, ready, running := 0, 0, false
	var last metav1.Time
	for i := len(p.Status.ContainerStatuses) - 1; i >= 0; i-- {
		cs := p.Status.ContainerStatuses[i]
		restarts += int(cs.RestartCount)
		if t := cs.LastTerminationState.Terminated; t != nil && last.Before(&t.FinishedAt) {
			last = t.FinishedAt
		}
		switch st := cs.State; {
		case st.Waiting != nil && st.Waiting.Reason != "":
			reason = st.Waiting.Reason
		case st.Terminated != nil && st.Terminated.Reason != "":
			reason = st.Terminated.Reason
		case st.Terminated != nil && st.Terminated.Signal != 0:
			reason = "Signal:" + strconv.Itoa(int(st.Terminated.Signal))
		case st.Terminated != nil:
			reason = "ExitCode:" + strconv.Itoa(int(st.Terminated.ExitCode))
		case cs.Ready && st.Running != nil:
			running = true
			ready++
		}
	}
	if reason == "Completed" && running {
		reason = "NotReady"
		if podReady(p) {
			reason = "Running"
		}
	}
	if p.DeletionTimestamp != nil {
		reason = "Terminating"
	}
	rs := strconv.Itoa(restarts)
	if restarts != 0 && !last.IsZero() {
		rs = fmt.Sprintf("%d (%s ago)", restarts, age(last))
	}
	ip := ""
	if len(p.Status.PodIPs) > 0 {
		ip = p.Status.PodIPs[0].IP
	}
	gates := "<none>"
	if len(p.Spec.ReadinessGates) > 0 {
		n := 0
		for _, g := range p.Spec.ReadinessGates {
			for _, c := range p.Status.Conditions {
				if c.Type == g.ConditionType && c.Status == corev1.ConditionTrue {
					n++
				}
			}
		}
		gates = fmt.Sprintf("%d/%d", n, len(p.Spec.ReadinessGates))
	}
	row.Cells = []any{p.Name, fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers)), reason, rs, age(p.CreationTimestamp),
		orNone(ip), orNone(p.Spec.NodeName), orNone(p.Status.NominatedNodeName), gates}
	return row
}

// pdbRow is printers.go's printPodDisruptionBudget: N/A for a bound not
// set.
func pdbRow(o object) metav1.TableRow {
	b := o.(*policyv1.PodDisruptionBudget)
	minA, maxU := "N/A", "N/A"
	if b.Spec.MinAvailable != nil {
		minA = b.Spec.MinAvailable.String()
	}
	if b.Spec.MaxUnavailable != nil {
		maxU = b.Spec.MaxUnavailable.String()
	}
	return metav1.TableRow{Cells: []any{b.Name, minA, maxU, int64(b.Status.DisruptionsAllowed), age(b.CreationTimestamp)}}
}

// deploymentRow is printers.go's printDeployment: READY is ready/desired
// replicas (spec.replicas, 1 when not set), then the updated and
// available counts; wide: the template's container names and images
// (layoutContainerCells: joined by commas) and the selector.
func deploymentRow(o object) metav1.TableRow {
	d := o.(*appsv1.Deployment)
	var names, images []string
	for _, c := range d.Spec.Template.Spec.Containers {
		names, images = append(names, c.Name), append(images, c.Image)
	}
	sel := "<invalid>"
	if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
		sel = s.String()
	}
	return metav1.TableRow{Cells: []any{d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d)), int64(d.Status.UpdatedReplicas),
		int64(d.Status.AvailableReplicas), age(d.CreationTimestamp), strings.Join(names, ","), strings.Join(images, ","), sel}}
}
