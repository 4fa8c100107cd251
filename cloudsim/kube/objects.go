package kube

import (
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// serveObj answers a request on a resource of the generic store: a
// collection (name ""), an object, or its eviction subresource.
func (a *API) serveObj(w http.ResponseWriter, r *http.Request, c *cluster, res *resource, ns, name, sub string) {
	m := r.Method
	switch {
	case sub == "eviction" && res == podRes && m == http.MethodPost:
		a.evict(w, r, c, ns, name)
	case sub == "status" && res != pdbRes && res != depRes && m == http.MethodPut:
		a.writeObj(w, r, c, res, ns, name, true)
	case sub == "status" && res != pdbRes && res != depRes && m == http.MethodPatch:
		a.patch(w, r, c, res, ns, name, true)
	case sub == "scale" && res == depRes:
		a.scale(w, r, c, ns, name)
	case sub != "":
		writeStatus(w, notFound())
	case name == "" && m == http.MethodGet && r.URL.Query().Get("watch") == "true":
		a.watch(w, r, c, res, ns)
	case name == "" && m == http.MethodGet:
		a.listObjs(w, r, c, res, ns)
	case name == "" && m == http.MethodPost && (ns != "" || !res.namespaced):
		a.writeObj(w, r, c, res, ns, "", false)
	case name != "" && m == http.MethodGet:
		a.mu.Lock()
		o, ok := c.objects(res)[ns+"/"+name]
		if ok {
			o = a.view(c, res, o)
		}
		a.mu.Unlock()
		if !ok {
			writeStatus(w, apierrors.NewNotFound(res.gr, name))
			return
		}
		if v := tableVersion(r); v != "" && tables[res].row != nil {
			writeTable(w, r, v, res, []object{o}, o.GetResourceVersion())
			return
		}
		writeObj(w, http.StatusOK, res, o)
	case name != "" && m == http.MethodPut:
		a.writeObj(w, r, c, res, ns, name, false)
	case name != "" && m == http.MethodPatch:
		a.patch(w, r, c, res, ns, name, false)
	case name != "" && m == http.MethodDelete:
		a.mu.Lock()
		o, err := a.deleteObj(c, res, ns, name)
		a.settle(c)
		a.mu.Unlock()
		if err != nil {
			writeStatus(w, err)
			return
		}
		// The registry's Store answers a finished delete with a Success
		// Status naming the object.
		writeJSON(w, http.StatusOK, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess,
			Details: &metav1.StatusDetails{Name: name, Group: res.gr.Group, Kind: res.gr.Resource, UID: o.GetUID()}})
	default:
		writeStatus(w, apierrors.NewMethodNotSupported(res.gr, strings.ToLower(m)))
	}
}

// view is what a read answers of a stored object: a copy, with a
// PodDisruptionBudget's status computed from its pods. a.mu is held.
func (a *API) view(c *cluster, res *resource, o object) object {
	o = o.DeepCopyObject().(object)
	if res == pdbRes {
		a.pdbStatus(c, o)
	}
	return o
}

// selectors parses a request's labelSelector and fieldSelector; a field
// the kind does not select on is 400, as the registry answers it.
func selectors(r *http.Request, res *resource) (labels.Selector, fields.Selector, error) {
	q := r.URL.Query()
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest("unable to parse requirement: " + err.Error())
	}
	fs, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	probe := res.fields(res.newObj())
	for _, req := range fs.Requirements() {
		if _, ok := probe[req.Field]; !ok {
			return nil, nil, apierrors.NewBadRequest("field label not supported: " + req.Field)
		}
	}
	return ls, fs, nil
}

func matches(res *resource, o object, ls labels.Selector, fs fields.Selector, ns string) bool {
	return (ns == "" || o.GetNamespace() == ns) && ls.Matches(labels.Set(o.GetLabels())) && fs.Matches(res.fields(o))
}

// listObjs answers a collection GET: the matching objects by namespace and
// name, and the store's revision as the list's resourceVersion.
func (a *API) listObjs(w http.ResponseWriter, r *http.Request, c *cluster, res *resource, ns string) {
	ls, fs, err := selectors(r, res)
	if err != nil {
		writeStatus(w, err)
		return
	}
	a.mu.Lock()
	items := []object{}
	for _, o := range c.objects(res) {
		if matches(res, o, ls, fs, ns) {
			items = append(items, a.view(c, res, o))
		}
	}
	rv := strconv.FormatUint(a.rv, 10)
	a.mu.Unlock()
	slices.SortFunc(items, func(x, y object) int { return strings.Compare(key(x), key(y)) })
	if v := tableVersion(r); v != "" && tables[res].row != nil {
		writeTable(w, r, v, res, items, rv)
		return
	}
	writeJSON(w, http.StatusOK, &struct {
		Kind       string          `json:"kind"`
		APIVersion string          `json:"apiVersion"`
		Metadata   metav1.ListMeta `json:"metadata"`
		Items      []object        `json:"items"`
	}{res.gvk.Kind + "List", res.gvk.GroupVersion().String(), metav1.ListMeta{ResourceVersion: rv}, items})
}

// writeObj answers a create (name "") or a replace: of the object (its
// status kept), or, with status, of its status subresource (all else kept),
// as a kubelet reports its node's conditions.
func (a *API) writeObj(w http.ResponseWriter, r *http.Request, c *cluster, res *resource, ns, name string, status bool) {
	body, err := readBody(r)
	if err != nil {
		writeStatus(w, err)
		return
	}
	in := res.newObj()
	if err := decodeAs(r.Header.Get("Content-Type"), body, res.gvk, in); err != nil {
		writeStatus(w, err)
		return
	}
	code := http.StatusOK
	var out object
	a.mu.Lock()
	err = checkNames(in, ns, name)
	switch {
	case err != nil:
	case name == "":
		in.SetNamespace(ns)
		in.SetResourceVersion("")
		prepareCreate(res, in)
		out, err = a.createObj(c, res, in)
		code = http.StatusCreated
	case status:
		in.SetNamespace(ns)
		out, err = a.updateStatus(c, res, in)
	default:
		in.SetNamespace(ns)
		out, err = a.updateObj(c, res, in, true)
	}
	if err == nil {
		out = a.view(c, res, out)
	}
	a.settle(c)
	a.mu.Unlock()
	if err != nil {
		writeStatus(w, err)
		return
	}
	writeObj(w, code, res, out)
}

// checkNames: a body's namespace and name must be the URL's.
func checkNames(in object, ns, name string) error {
	if in.GetNamespace() != "" && in.GetNamespace() != ns {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if name != "" && in.GetName() != name {
		return apierrors.NewBadRequest("the name of the object (" + in.GetName() + ") does not match the name on the URL (" + name + ")")
	}
	return nil
}

// patch answers a PATCH: a JSON merge patch (RFC 7386), a strategic merge
// patch, or a JSON patch (RFC 6902) applied to the stored object's JSON,
// then stored as a PUT would be (a resourceVersion the patch sets is a
// precondition; status is kept), or, with status, to its status
// subresource (only the status it patched is stored).
func (a *API) patch(w http.ResponseWriter, r *http.Request, c *cluster, res *resource, ns, name string, status bool) {
	body, err := readBody(r)
	if err != nil {
		writeStatus(w, err)
		return
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	a.mu.Lock()
	defer a.mu.Unlock()
	defer a.settle(c)
	old, ok := c.objects(res)[ns+"/"+name]
	if !ok {
		writeStatus(w, apierrors.NewNotFound(res.gr, name))
		return
	}
	in := res.newObj()
	if err := applyPatch(mt, old, body, in); err != nil {
		writeStatus(w, err)
		return
	}
	if err := checkNames(in, ns, name); err != nil {
		writeStatus(w, err)
		return
	}
	var out object
	if status {
		out, err = a.updateStatus(c, res, in)
	} else {
		out, err = a.updateObj(c, res, in, true)
	}
	if err != nil {
		writeStatus(w, err)
		return
	}
	writeObj(w, http.StatusOK, res, a.view(c, res, out))
}

// writeObj writes an object with its kind and apiVersion.
func writeObj(w http.ResponseWriter, status int, res *resource, o object) {
	o.GetObjectKind().SetGroupVersionKind(res.gvk)
	writeJSON(w, status, o)
}

// applyPatch applies a patch of media type mt to old's JSON and reads the
// result into out (of old's kind): a merge patch (RFC 7386), a strategic
// merge patch (the kind's patch strategies), a JSON patch (RFC 6902);
// another type is 415, a patch that does not apply 400.
func applyPatch(mt string, old any, body []byte, out runtime.Object) error {
	orig, _ := json.Marshal(old)
	var patched []byte
	var err error
	switch types.PatchType(mt) {
	case types.MergePatchType:
		patched, err = jsonpatch.MergePatch(orig, body)
	case types.StrategicMergePatchType:
		patched, err = strategicpatch.StrategicMergePatch(orig, body, out)
	case types.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(body); err == nil {
			patched, err = p.Apply(orig)
		}
	default:
		return unsupportedMediaType()
	}
	if err == nil {
		err = json.Unmarshal(patched, out)
	}
	if err != nil {
		return apierrors.NewBadRequest("the patch could not be applied: " + err.Error())
	}
	return nil
}
