package placement

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
)

// ReadApp reads the intent of a Kompox-style app file (YAML or JSON):
// spec.deployment's pool, zone, pools and zones, the lists given as YAML
// lists or comma-separated. The file's other fields are not kpool's and are
// not read. name is the file's, for errors ("" names it app).
func ReadApp(name string, data []byte) (Intent, error) {
	if name == "" {
		name = "app"
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return Intent{}, kpool.Invalid(name, "not YAML or JSON: %v", err)
	}
	var f struct {
		Spec *struct {
			Deployment *struct {
				Pool  any `json:"pool"`
				Zone  any `json:"zone"`
				Pools any `json:"pools"`
				Zones any `json:"zones"`
			} `json:"deployment"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(js, &f); err != nil {
		return Intent{}, kpool.Invalid(name, "not an app file: %v", err)
	}
	if f.Spec == nil || f.Spec.Deployment == nil {
		return Intent{}, kpool.Invalid(name, "has no spec.deployment: an app file gives spec.deployment.pool, zone, pools or zones")
	}
	d := f.Spec.Deployment
	var fe kpool.FieldErrors
	var i Intent
	at := name + ": spec.deployment."
	i.Pool = scalar(&fe, at+"pool", d.Pool)
	i.Zone = scalar(&fe, at+"zone", d.Zone)
	i.Pools = values(&fe, at+"pools", d.Pools)
	i.Zones = values(&fe, at+"zones", d.Zones)
	return i, fe.Err()
}

func scalar(fe *kpool.FieldErrors, field string, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	case float64: // zone: 1
		return fmt.Sprint(x)
	}
	fe.Add(field, "is a %T, not a name", v)
	return ""
}

func values(fe *kpool.FieldErrors, field string, v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return list(x)
	case []any:
		var out []string
		for i, e := range x {
			if s := scalar(fe, fmt.Sprintf("%s[%d]", field, i), e); s != "" {
				out = append(out, s)
			}
		}
		return dedupe(out)
	}
	fe.Add(field, "is a %T, not a list of names", v)
	return nil
}
