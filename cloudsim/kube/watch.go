package kube

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
)

// prepareCreate resets what a create does not take from its body: a Pod
// starts Pending, a PodDisruptionBudget and a Deployment with no status
// (the pod, PDB and Deployment strategies' PrepareForCreate).
func prepareCreate(res *resource, o object) {
	switch res {
	case podRes:
		o.(*corev1.Pod).Status = corev1.PodStatus{Phase: corev1.PodPending}
	case pdbRes, depRes:
		res.keepStatus(res.newObj(), o)
	}
}

// watchEvent is a watch event as the API server streams it in JSON: one
// object per line, {"type": ..., "object": ...}.
type watchEvent struct {
	Type   watch.EventType `json:"type"`
	Object any             `json:"object"`
}

// watch answers ?watch=true: with no resourceVersion, "0" or
// sendInitialEvents=true, ADDED for every matching object first (then, for
// sendInitialEvents, a BOOKMARK annotated k8s.io/initial-events-end);
// with a resourceVersion, the events after it, or an ERROR event with a
// 410 Expired Status when they are gone. The stream ends after
// timeoutSeconds or when the client goes.
func (a *API) watch(w http.ResponseWriter, r *http.Request, c *cluster, res *resource, ns string) {
	ls, fs, err := selectors(r, res)
	if err != nil {
		writeStatus(w, err)
		return
	}
	q := r.URL.Query()
	wt := &watcher{res: res, ch: make(chan event, 256)}
	backlog, gone := a.startWatch(c, wt, res, ns, q.Get("resourceVersion"), q.Get("sendInitialEvents") == "true", ls, fs)
	defer a.stopWatch(c, wt)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush() // the client's Watch returns on the headers
	}
	enc := json.NewEncoder(w)
	table, headers := "", true
	include, _ := includeObject(r)
	if tables[res].row != nil {
		table = tableVersion(r)
	}
	send := func(e watchEvent) bool {
		if o, ok := e.Object.(object); ok {
			o.GetObjectKind().SetGroupVersionKind(res.gvk)
			if table != "" && e.Type != watch.Bookmark {
				// The API server's watch handler sends each object as a
				// Table, with the columns in the first event only.
				e.Object = toTable(table, include, res, []object{o}, o.GetResourceVersion(), headers)
				headers = false
			}
		}
		if enc.Encode(e) != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	if gone != nil {
		s := gone.Status()
		s.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		send(watchEvent{Type: watch.Error, Object: &s})
		return
	}
	for _, e := range backlog {
		if !send(e) {
			return
		}
	}
	var timeout <-chan time.Time
	if s, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && s > 0 {
		t := time.NewTimer(time.Duration(s) * time.Second)
		defer t.Stop()
		timeout = t.C
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-timeout:
			return
		case ev, ok := <-wt.ch:
			if !ok {
				return
			}
			if e, ok := filter(ev, res, ns, ls, fs); ok && !send(e) {
				return
			}
		}
	}
}

// startWatch registers wt and returns the events it starts with, or the
// 410 for a resourceVersion whose events are gone.
func (a *API) startWatch(c *cluster, wt *watcher, res *resource, ns, rv string, initial bool, ls labels.Selector, fs fields.Selector) ([]watchEvent, *apierrors.StatusError) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []watchEvent
	if rv == "" || rv == "0" || initial {
		for _, o := range c.objects(res) {
			if matches(res, o, ls, fs, ns) {
				out = append(out, watchEvent{Type: watch.Added, Object: a.view(c, res, o)})
			}
		}
		if initial {
			b := res.newObj()
			b.SetResourceVersion(strconv.FormatUint(a.rv, 10))
			b.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
			out = append(out, watchEvent{Type: watch.Bookmark, Object: b})
		}
	} else {
		from, err := strconv.ParseUint(rv, 10, 64)
		if err != nil || from < c.floor {
			// The watch cache's answer (apiserver storage/cacher's
			// watch_cache.go): an ERROR event carrying 410 Expired.
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s (%d)", rv, c.floor))
		}
		for _, ev := range c.events {
			if ev.rv > from && ev.res == res {
				if e, ok := filter(ev, res, ns, ls, fs); ok {
					e.Object = a.view(c, res, e.Object.(object))
					out = append(out, e)
				}
			}
		}
	}
	c.watchers[wt] = struct{}{}
	return out, nil
}

func (a *API) stopWatch(c *cluster, wt *watcher) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(c.watchers, wt)
}

// filter turns a write into the event a selective watch sees, as the
// API server's cacher does: an object that stops matching is DELETED for
// it, one that starts matching ADDED.
func filter(ev event, res *resource, ns string, ls labels.Selector, fs fields.Selector) (watchEvent, bool) {
	now := matches(res, ev.obj, ls, fs, ns)
	was := ev.prev != nil && matches(res, ev.prev, ls, fs, ns)
	o := ev.obj.DeepCopyObject().(object)
	switch {
	case ev.typ == watch.Deleted && was:
		return watchEvent{Type: watch.Deleted, Object: o}, true
	case ev.typ == watch.Deleted:
		return watchEvent{}, false
	case now && was:
		return watchEvent{Type: watch.Modified, Object: o}, true
	case now:
		return watchEvent{Type: watch.Added, Object: o}, true
	case was:
		return watchEvent{Type: watch.Deleted, Object: o}, true
	}
	return watchEvent{}, false
}
