package kpool_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// cloudNames are the names that belong to one cloud: the platform constants,
// the API's platform block fields and types.
var cloudNames = map[string]bool{
	"PlatformAzure": true, "PlatformAWS": true, "PlatformGCP": true, "PlatformOCI": true,
	"PlatformCivo": true, "PlatformK3s": true, "PlatformMicroVM": true,
	"Azure": true, "AWS": true, "GCP": true, "OCI": true, "Civo": true, "K3s": true, "MicroVM": true,
	"AzureCluster": true, "AWSCluster": true, "GCPCluster": true, "OCICluster": true, "CivoCluster": true,
	"AzureNodePool": true, "AWSNodePool": true, "GCPNodePool": true, "OCINodePool": true, "CivoNodePool": true,
}

// TestOneFolderPerCloud keeps what kpool knows about a cloud in that cloud's
// folders: outside provider/<cloud> and cloudsim/<cloud> no code (tests and
// test suites aside) names a platform constant, a platform block's field or
// type. The API's block types themselves are declared in the root package,
// where the guide's shapes are; declaring them is not using them.
func TestOneFolderPerCloud(t *testing.T) {
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (cloudFolder(path) || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if strings.HasSuffix(f.Name.Name, "test") || f.Name.Name == "testdb" {
			return nil // a test suite or test fixture
		}
		declared := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for _, id := range n.Names {
					declared[id] = true
				}
			case *ast.Field:
				for _, id := range n.Names {
					declared[id] = true
					if cloudNames[id.Name] {
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
				if cloudNames[n.Name] && !declared[n] {
					found = append(found, fset.Position(n.Pos()).String()+": "+n.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: a cloud's name outside its folders (provider/<cloud>, cloudsim/<cloud>)", f)
	}
}

// cloudFolder reports whether a directory is one cloud's: provider/<cloud>
// or cloudsim/<cloud>, not the shared packages beside them.
func cloudFolder(path string) bool {
	dir, name, ok := strings.Cut(filepath.ToSlash(path), "/")
	if !ok || strings.Contains(name, "/") {
		return false
	}
	switch dir {
	case "provider":
		return name != "catalog" && name != "fake" && name != "providertest"
	case "cloudsim":
		return name != "sim" && name != "internal"
	}
	return false
}
