package api

import (
	_ "embed"
	"net/http"
	"sync"

	"sigs.k8s.io/yaml"
)

// OpenAPIYAML is the OpenAPI 3 description of the API. The tests check every
// request and response they make against it, and that it lists exactly the
// routes the server serves.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// openAPIJSON is the document as JSON, made on first request rather than
// at start: the conversion's garbage was a tenth of an idle server's heap.
var openAPIJSON = sync.OnceValue(func() []byte {
	b, err := yaml.YAMLToJSON(OpenAPIYAML)
	if err != nil {
		panic("api/openapi.yaml: " + err.Error())
	}
	return b
})

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPIJSON())
}
