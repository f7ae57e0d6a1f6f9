package httpapi

import (
	_ "embed"
	"net/http"

	"github.com/julienschmidt/httprouter"
)

// openAPIDocument is the OpenAPI description of this API.
//
//go:embed openapi.yaml
var openAPIDocument []byte

// openAPIPath serves the document in every workspace's API, without
// authentication: it describes the API, not any workspace's data.
const openAPIPath = basePath + "/openapi.yaml"

func serveOpenAPI(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
	recorderOf(w).route = openAPIPath
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(openAPIDocument)
}
