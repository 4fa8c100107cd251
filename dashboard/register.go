package dashboard

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/service"
)

// Registering a cluster from the fleet page: a form posted to the
// dashboard, which builds the API's cluster body from it (as `kpool
// cluster create` does from its flags) and creates the cluster through the
// service, so that its checks and field-named errors are the API's.

// platformForm is one platform's part of the register form.
type platformForm struct {
	Type   kpool.PlatformType
	Name   string // the provider's name ("AKS")
	Fields []platformField
}

// platformField is one field of a platform's cluster block.
type platformField struct {
	provider.ClusterFlag
	Input string // the form's name for it: its path in the API's body
}

// mayCreateClusters reports whether id may register clusters: everyone but
// a controller (service.CreateCluster refuses those).
func mayCreateClusters(id *kpool.Identity) bool { return id != nil && (!id.Controller || id.Admin) }

// platformForms are the platforms a cluster may be registered on, with
// their cluster blocks' fields.
func (h *Handler) platformForms() []platformForm {
	var out []platformForm
	for _, p := range h.o.Profiles.Profiles() {
		f := platformForm{Type: p.Type(), Name: p.Capabilities().Name}
		for _, fl := range p.CLI().ClusterFlags {
			f.Fields = append(f.Fields, platformField{fl, "spec.platform." + string(p.Type()) + "." + fl.Field})
		}
		out = append(out, f)
	}
	return out
}

// registerForm shows the form to register a cluster.
func (h *Handler) registerForm(w http.ResponseWriter, r *http.Request) {
	if !mayCreateClusters(identity(r)) {
		h.fail(w, r, kpool.Errorf(kpool.CodeForbidden, "controller identities may read and report status, not register clusters"))
		return
	}
	h.renderRegister(w, r, nil, nil)
}

// renderRegister renders the register form with the values posted (none
// at first) and the error the service answered, its fields next to their
// inputs.
func (h *Handler) renderRegister(w http.ResponseWriter, r *http.Request, posted map[string][]string, err error) {
	id := identity(r)
	data := map[string]any{"Title": "Register a cluster", "Platforms": h.platformForms(), "Values": map[string]string{},
		"Errors": map[string]string{}, "Endpoint": id.Admin || len(h.o.Service.Endpoints) > 0,
		"Allowed": kpool.SortedKeys(h.o.Service.Endpoints)}
	for k, v := range posted {
		data["Values"].(map[string]string)[k] = strings.Join(v, "\n")
	}
	if err != nil {
		var ke *kpool.Error
		if !errors.As(err, &ke) || status(ke.Code) == http.StatusInternalServerError {
			h.fail(w, r, err)
			return
		}
		for _, f := range ke.Fields {
			data["Errors"].(map[string]string)[f.Field] = f.Reason
		}
		data["Error"] = ke
		w.WriteHeader(status(ke.Code))
	}
	h.render(w, r, "register", data)
}

// register creates the cluster the form describes: to its page when made,
// the form again with the errors when not. It is posted by the
// dashboard's own page only (login CSRF's check).
func (h *Handler) register(w http.ResponseWriter, r *http.Request) {
	if !h.sameOrigin(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	f := r.PostForm
	spec, err := h.clusterSpec(f)
	var c *kpool.Cluster
	if err == nil {
		c, err = h.o.Service.CreateCluster(r.Context(), service.ClusterCreate{Name: strings.TrimSpace(f.Get("name")), Spec: spec})
	}
	if err != nil {
		h.renderRegister(w, r, f, err)
		return
	}
	http.Redirect(w, r, "/clusters/"+c.ID, http.StatusSeeOther)
}

// clusterSpec is the API's cluster spec from the form: the chosen
// platform's block (sent even when empty, so that the service names each
// missing field), the endpoint and the credential when given.
func (h *Handler) clusterSpec(f map[string][]string) (json.RawMessage, error) {
	get := func(k string) string {
		if v := f[k]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	t := kpool.PlatformType(get("spec.platform.type"))
	platform := map[string]any{"type": t}
	i := slices.IndexFunc(h.platformForms(), func(p platformForm) bool { return p.Type == t })
	if i >= 0 {
		p := h.platformForms()[i]
		block := map[string]any{}
		var fe kpool.FieldErrors
		for _, fl := range p.Fields {
			v := get(fl.Input)
			switch {
			case v == "":
			case fl.Map:
				block[fl.Field] = formPairs(fl.Input, v, &fe)
			default:
				block[fl.Field] = v
			}
		}
		if err := fe.Err(); err != nil {
			return nil, err
		}
		if len(block) > 0 || h.o.Profiles.Profile(t).Capabilities().NodePools {
			platform[string(t)] = block
		}
	}
	spec := map[string]any{"platform": platform}
	for _, k := range []string{"endpoint", "credential"} {
		if v := get("spec." + k); v != "" {
			spec[k] = v
		}
	}
	return json.Marshal(spec)
}

// formPairs reads KEY=VALUE lines (a map field such as EKS's subnets).
func formPairs(field, text string, fe *kpool.FieldErrors) map[string]string {
	out := map[string]string{}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			fe.Add(field, "%q is not KEY=VALUE", line)
			continue
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}
