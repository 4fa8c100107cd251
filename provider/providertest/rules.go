package providertest

import (
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/internal/jsondoc"
	"github.com/kpool/kpool/provider/catalog"
)

// Rules are a platform's valid cluster and pool, for the table tests of
// its profile's rules as kpool applies them: each case patches one of them
// and says which field, if any, the API refuses.
type Rules struct {
	Cluster string // a valid cluster spec, JSON
	Pool    string // a valid pool spec of a pool in Cluster, JSON
}

// Case is one case of a table: Patch (a JSON merge patch) of the valid
// spec, for a pool named Pool ("" is workers), and the field at fault Want
// ("" is valid).
type Case struct {
	Name, Pool, Patch, Want string
}

// RunPools checks every pool case.
func (r Rules) RunPools(t *testing.T, cases []Case) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			name := tc.Pool
			if name == "" {
				name = "workers"
			}
			check(t, r.PoolErrors(t, name, tc.Patch), tc.Want)
		})
	}
}

// RunClusters checks every cluster case.
func (r Rules) RunClusters(t *testing.T, cases []Case) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) { check(t, r.ClusterErrors(t, tc.Patch), tc.Want) })
	}
}

// check wants errs valid (want "") or to hold an error on want, with a
// reason.
func check(t *testing.T, errs []kpool.FieldError, want string) {
	t.Helper()
	if want == "" {
		if len(errs) > 0 {
			t.Fatalf("want valid, got %v", errs)
		}
		return
	}
	for _, e := range errs {
		if e.Field == want {
			if e.Reason == "" {
				t.Fatalf("%s: empty reason", e.Field)
			}
			return
		}
	}
	t.Fatalf("want an error on %s, got %v", want, errs)
}

// ClusterErrors are the fields at fault in the valid cluster merged with
// patch, decoded and validated as the API does.
func (r Rules) ClusterErrors(t testing.TB, patch string) []kpool.FieldError {
	t.Helper()
	c := &kpool.Cluster{Name: "prod"}
	if errs := decode(t, r.Cluster, patch, &c.Spec); errs != nil {
		return errs
	}
	return fields(kpool.ValidateCluster(catalog.Registry(), c))
}

// PoolErrors are the fields at fault in the valid pool merged with patch,
// named name, decoded, defaulted and validated in the valid cluster as the
// API does.
func (r Rules) PoolErrors(t testing.TB, name, patch string) []kpool.FieldError {
	t.Helper()
	c := &kpool.Cluster{Name: "prod"}
	if errs := decode(t, r.Cluster, "{}", &c.Spec); errs != nil {
		t.Fatalf("the valid cluster: %v", errs)
	}
	reg := catalog.Registry()
	if err := kpool.ValidateCluster(reg, c); err != nil {
		t.Fatalf("the valid cluster: %v", err)
	}
	p := &kpool.NodePool{Name: name}
	if errs := decode(t, r.Pool, patch, &p.Spec); errs != nil {
		return errs
	}
	kpool.DefaultNodePoolSpec(&p.Spec, c, reg.Profile(c.Spec.Platform.Type).Region(&c.Spec))
	return fields(kpool.ValidateNodePool(reg, p, c))
}

// decode merges patch into base and decodes it strictly into v, as the
// service reads a document; the fields at fault, or nil.
func decode(t testing.TB, base, patch string, v any) []kpool.FieldError {
	t.Helper()
	merged, err := jsondoc.Merge([]byte(base), []byte(patch), true)
	if err != nil {
		t.Fatalf("bad test patch %s: %v", patch, err)
	}
	var fe kpool.FieldErrors
	if !jsondoc.Decode(merged, v, "spec", fe.Report) {
		return fields(fe.Err())
	}
	return nil
}

func fields(err error) []kpool.FieldError {
	if err == nil {
		return nil
	}
	return err.(*kpool.Error).Fields
}
