package kpool_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/cloudsim/sim"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

// TestOneFolderPerCloud keeps what kpool knows about a cloud in that
// cloud's folders: outside them no code names a platform constant, a
// platform block's field or type, tests included. The API's block types
// themselves are declared in the root package, where the guide's shapes
// are; declaring them is not using them.
//
// Two kinds of file may name clouds elsewhere. Test helper packages (a
// package named *test, such as provider/providertest and store/storetest)
// give other tests their clusters and pools of each cloud: that is their
// job. And the test files in testsNamingClouds, which exercise shared
// behaviour on concrete clouds' specs and have not yet moved their
// fixtures into a helper; the list may only shrink.
func TestOneFolderPerCloud(t *testing.T) {
	names, folders := cloudNames(), cloudFolders(t)
	if len(names) < 3*len(clouds.All()) || len(folders) < len(catalog.Profiles()) {
		t.Fatalf("%d cloud names from the platform blocks, %d cloud folders from the catalog: too few", len(names), len(folders))
	}
	fset := token.NewFileSet()
	found := map[string][]string{} // file -> the names it uses
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (folders[filepath.ToSlash(path)] || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if strings.HasSuffix(f.Name.Name, "test") && !strings.HasSuffix(path, "_test.go") {
			return nil // a test helper package's own file
		}
		for _, n := range usedNames(f, names) {
			found[filepath.ToSlash(path)] = append(found[filepath.ToSlash(path)], fset.Position(n.Pos()).String()+": "+n.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, uses := range found {
		if !testsNamingClouds[file] {
			for _, u := range uses {
				t.Errorf("%s: a cloud's name outside its folders", u)
			}
		}
	}
	if t.Failed() {
		t.Logf("the clouds' folders: %s", folderList(folders))
	}
	for file := range testsNamingClouds {
		if len(found[file]) == 0 {
			t.Errorf("%s names no cloud any more: take it off testsNamingClouds", file)
		}
	}
}

// testsNamingClouds are the test files outside the clouds' folders that
// still name clouds: each exercises shared behaviour (the API, the CLI,
// the controllers, placement, the store, shared validation and plans) on
// concrete clouds' specs. Their fixtures belong in a test helper package,
// or their per-cloud cases beside the profiles; none may be added.
var testsNamingClouds = map[string]bool{
	"api/auth_test.go": true, "api/openapi_test.go": true,
	"cloudsim/cloudsim_test.go": true,
	"cmd/kpool/apply_test.go":   true, "cmd/kpool/client_test.go": true, "cmd/kpool/cloud_test.go": true,
	"cmd/kpool/completion_test.go": true, "cmd/kpool/dev_test.go": true, "cmd/kpool/dryrun_test.go": true,
	"cmd/kpool/events_test.go": true, "cmd/kpool/format_test.go": true, "cmd/kpool/names_test.go": true,
	"cmd/kpool/place_test.go": true, "cmd/kpool/plan_test.go": true, "cmd/kpool/readme_steps_test.go": true, "cmd/kpool/wait_test.go": true,
	"placement/land_test.go":       true,
	"provider/credentials_test.go": true, "provider/emulated_test.go": true, "provider/fake/fake_test.go": true,
	"provider/nodes_test.go": true, "provider/owner_test.go": true, "provider/plan_test.go": true,
	"reconcile/e2e_owner_test.go": true, "reconcile/e2e_test.go": true, "reconcile/e2e_wire_test.go": true,
	"reconcile/liveness_test.go": true, "reconcile/owner_test.go": true, "reconcile/reach_test.go": true,
	"reconcile/reconcile_test.go": true, "reconcile/refusal_test.go": true, "reconcile/nodes_test.go": true, "reconcile/robust_test.go": true,
	"store/postgres/postgres_test.go": true,
	"validate_test.go":                true,
	// Moved or split in the restructuring of issue 28 (the same fixtures
	// under new names): token_test.go's token cases into auth, the API's
	// conformance scenario out of openapi_test.go, the CLI's apply and
	// flag-to-spec cases into their packages, its table cases into
	// output_test.go, and the emulators' shared demo cluster.
	"auth/token_test.go": true, "api/conformance_updates_test.go": true,
	"apply/apply_test.go": true, "poolspec/poolspec_test.go": true, "cmd/kpool/output_test.go": true,
	"cloudsim/internal/demo/demo_test.go": true,
	// Long test files split by theme (the same tests): api_test.go,
	// reconcile_test.go, robust_test.go and cmd/kpool's client_test.go.
	"api/guide_test.go": true, "api/status_test.go": true,
	"reconcile/faults_test.go": true, "reconcile/lease_test.go": true, "reconcile/lifecycle_test.go": true,
	"reconcile/outage_test.go": true, "reconcile/progress_test.go": true,
	"cmd/kpool/create_test.go": true, "cmd/kpool/lists_test.go": true, "cmd/kpool/reads_test.go": true,
}

// cloudNames are the names that belong to one cloud, read from the API's
// platform blocks: each block field of ClusterPlatform and
// NodePoolPlatform (Azure), its platform constant (PlatformAzure), and its
// type when no other platform shares it (AzureCluster, AzureNodePool; not
// EmptyPlatform).
func cloudNames() map[string]bool {
	out, types := map[string]bool{}, map[string]int{}
	for _, t := range []reflect.Type{reflect.TypeFor[kpool.ClusterPlatform](), reflect.TypeFor[kpool.NodePoolPlatform]()} {
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Type.Kind() != reflect.Pointer {
				continue // Type
			}
			out[f.Name], out["Platform"+f.Name] = true, true
			types[f.Type.Elem().Name()]++
		}
	}
	for name, n := range types {
		if n == 1 {
			out[name] = true
		}
	}
	return out
}

// cloudFolders are the folders of every platform of the catalog: its
// profile's package (provider/<cloud>, its driver below it) and, for a
// cloud kpool drives (provider/catalog/clouds), its driver's and its
// emulator's packages.
func cloudFolders(t *testing.T) map[string]bool {
	out := map[string]bool{}
	add := func(v any) {
		ty := reflect.TypeOf(v)
		if ty.Kind() == reflect.Pointer {
			ty = ty.Elem()
		}
		dir, ok := strings.CutPrefix(ty.PkgPath(), "github.com/kpool/kpool/")
		if !ok || dir == "provider" || dir == "cloudsim" {
			t.Fatalf("%T is no cloud's own type", v)
		}
		out[dir] = true
	}
	for _, p := range catalog.Profiles() {
		add(p)
	}
	for _, c := range clouds.All() {
		add(c.Driver(provider.DriverOptions{}))
		emu, err := c.Emulator(sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		add(emu)
	}
	return out
}

// usedNames are the identifiers of names that f uses, not declares.
func usedNames(f *ast.File, names map[string]bool) []*ast.Ident {
	declared := map[*ast.Ident]bool{}
	var out []*ast.Ident
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for _, id := range n.Names {
				declared[id] = true
			}
		case *ast.Field:
			for _, id := range n.Names {
				declared[id] = true
				if names[id.Name] {
					// A platform block's field declares its type too.
					ast.Inspect(n.Type, func(m ast.Node) bool {
						if id, ok := m.(*ast.Ident); ok {
							declared[id] = true
						}
						return true
					})
				}
			}
		case *ast.TypeSpec:
			declared[n.Name] = true
		case *ast.Ident:
			if names[n.Name] && !declared[n] {
				out = append(out, n)
			}
		}
		return true
	})
	return out
}

func folderList(folders map[string]bool) string {
	var out []string
	for f := range folders {
		out = append(out, f)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
