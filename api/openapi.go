package api

import (
	_ "embed"
	"net/http"

	"sigs.k8s.io/yaml"
)

// OpenAPIYAML is the OpenAPI 3 description of the API. The tests check every
// request and response they make against it, and that it lists exactly the
// routes the server serves.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

var openAPIJSON = func() []byte {
	b, err := yaml.YAMLToJSON(OpenAPIYAML)
	if err != nil {
		panic("api/openapi.yaml: " + err.Error())
	}
	return b
}()

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPIJSON)
}
