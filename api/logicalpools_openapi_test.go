package api

import (
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/kpool/kpool"
)

// TestOpenAPILogicalPoolSchemas: each logical pool schema names exactly the
// JSON fields of its Go type, and a response schema requires only fields Go
// always writes, as TestOpenAPISchemasMatchGoTypes checks the others.
func TestOpenAPILogicalPoolSchemas(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	for name, v := range map[string]any{
		"LogicalPoolBody": LogicalPoolBody{}, "LogicalPool": kpool.LogicalPool{}, "LogicalPoolSpec": kpool.LogicalPoolSpec{},
		"Fallback": kpool.Fallback{}, "CapacityPolicy": kpool.CapacityPolicy{}, "LogicalPoolStatus": kpool.LogicalPoolStatus{},
		"LogicalMember": kpool.LogicalMember{}, "UnavailableOffering": kpool.UnavailableOffering{},
		"LogicalPoolList": LogicalPoolList{}, "LogicalPoolDryRun": LogicalPoolDryRun{},
	} {
		ref := doc.Components.Schemas[name]
		if ref == nil {
			t.Errorf("components.schemas.%s is missing", name)
			continue
		}
		var props []string
		for p := range ref.Value.Properties {
			props = append(props, p)
		}
		sort.Strings(props)
		fields, always := goJSONFields(reflect.TypeOf(v))
		if !slices.Equal(props, fields) {
			t.Errorf("schema %s has properties %v; the Go type %T has JSON fields %v", name, props, v, fields)
		}
		for _, r := range ref.Value.Required {
			if !always[r] && name != "LogicalPoolDryRun" {
				t.Errorf("schema %s requires %q, which %T omits when empty", name, r, v)
			}
		}
	}
}
