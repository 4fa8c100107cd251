package kpool_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/kpool/kpool"

// layers says which of kpool's packages each room may import (ARCHITECTURE.md
// draws them). A package is matched by its longest listed prefix; "" is the
// root. internal/... is open to all, and tests are not checked: a test may
// reach across rooms to prove them.
type layer struct {
	room string
	may  []string // kpool packages it may import (prefixes; "." is the root, "" any)
	why  string
}

var layers = []layer{
	{room: ".", may: nil, why: "the domain model imports no kpool package"},
	{room: "audit", may: []string{"."}, why: "the audit trail is domain events"},
	{room: "auth", may: []string{"."}, why: "who a caller is depends on the domain only"},
	{room: "service", may: []string{".", "audit"}, why: "the service applies the rules and records them"},
	{room: "provider", may: []string{".", "provider"}, why: "clouds know the domain, never the service, the store or the API"},
	{room: "provider/catalog/clouds", may: []string{".", "provider", "cloudsim"}, why: "one line per cloud names its profile, driver and emulator"},
	{room: "provider/providertest", may: []string{".", "provider", "cloudsim/sim"}, why: "the drivers' conformance suite runs on the emulator engine"},
	{room: "cloudsim", may: []string{".", "cloudsim"}, why: "emulators speak the clouds' wire, not kpool's service"},
	{room: "store", may: []string{".", "store"}, why: "stores implement the domain's Store"},
	{room: "store/storetest", may: []string{".", "service", "audit", "auth", "provider", "provider/catalog"}, why: "the conformance suite drives stores through the service"},
	{room: "store/testdb", may: []string{".", "store/sqlite", "store/postgres"}, why: "test databases"},
	{room: "placement", may: []string{".", "provider"}, why: "the converter reads profiles and pools"},
	{room: "poolspec", may: []string{".", "provider"}, why: "flags into a platform's spec"},
	{room: "oidc", may: []string{"."}, why: "people's identities"},
	{room: "api", may: []string{".", "service", "auth", "audit", "placement", "provider"}, why: "HTTP over the service"},
	{room: "apply", may: []string{".", "api", "service"}, why: "the apply engine runs on the Go client"},
	{room: "kubeapi", may: []string{".", "provider"}, why: "client-go on the access a driver hands out"},
	{room: "drain", may: []string{"."}, why: "kubectl's drain on a client-go clientset, for the controllers to call"},
	{room: "reconcile", may: []string{".", "service", "audit", "provider", "kubeapi", "drain"}, why: "controllers report through the service, act through drivers, watch clusters' nodes and drain them"},
	{room: "reconcile/reconciletest", may: []string{".", "service", "provider", "reconcile", "cloudsim/sim", "store/testdb", "store/storetest"}, why: "end-to-end runs of the controllers on an emulator"},
	{room: "dashboard", may: []string{".", "service", "audit", "auth", "provider"}, why: "pages over the service"},
	{room: "cmd", may: []string{""}, why: "the binaries wire everything"},
}

// TestLayers fails on an import that crosses the rooms' order: the domain
// importing the service, a driver importing the store, the API importing a
// controller.
func TestLayers(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && p != "." || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(p))
		rule := roomOf(pkg)
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if ip != module && !strings.HasPrefix(ip, module+"/") {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(ip, module), "/")
			if rel == "" {
				rel = "."
			}
			if !allowed(pkg, rel, rule.may) {
				t.Errorf("%s imports %s: %s may import only %v (%s)", p, ip, rule.room, rule.may, rule.why)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// roomOf is the rule of package directory pkg: its longest listed prefix.
func roomOf(pkg string) (rule layer) {
	best := -1
	for _, l := range layers {
		if (pkg == l.room || strings.HasPrefix(pkg, l.room+"/") || l.room == ".") && len(l.room) > best {
			rule, best = l, len(l.room)
		}
	}
	return rule
}

// allowed reports whether package pkg may import kpool package rel: one of
// may (or below it), internal/..., or a package of its own room below it.
func allowed(pkg, rel string, may []string) bool {
	if strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/") && strings.HasPrefix(pkg, strings.SplitN(rel, "/internal/", 2)[0]) {
		return true
	}
	if strings.HasPrefix(rel, pkg+"/") {
		return true // its own subpackages
	}
	for _, m := range may {
		switch {
		case m == "":
			return true
		case m == ".":
			if rel == "." {
				return true
			}
		case rel == m || strings.HasPrefix(rel, m+"/") && !crossesCloud(pkg, rel):
			return true
		}
	}
	return false
}

// shared are the folders under provider and cloudsim that serve every
// cloud; any other folder there is one cloud's.
var shared = map[string]bool{"sim": true, "kube": true, "internal": true, "catalog": true, "fake": true, "metrics": true,
	"ratelimit": true, "deadline": true, "providertest": true}

// crossesCloud reports an import from one cloud's folder into another's
// (a driver importing another cloud's profile): each cloud stands alone.
func crossesCloud(pkg, rel string) bool {
	cloudOf := func(p string) string {
		parts := strings.Split(p, "/")
		if len(parts) >= 2 && (parts[0] == "provider" || parts[0] == "cloudsim") && !shared[parts[1]] {
			return parts[0] + "/" + parts[1]
		}
		return ""
	}
	a, b := cloudOf(pkg), cloudOf(rel)
	return a != "" && b != "" && a != b
}
