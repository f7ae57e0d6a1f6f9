package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/identitylib/identity"
)

// pageResponse is the pagination envelope of list responses.
type pageResponse[T any] struct {
	Data []T      `json:"data"`
	Meta pageMeta `json:"meta"`
}

// pageMeta says which window of how many items a page is.
type pageMeta struct {
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

// envelope wraps a library list page; its Items are never nil, so data is
// [] and never null.
func envelope[T any](list identity.List[T]) pageResponse[T] {
	return pageResponse[T]{Data: list.Items, Meta: pageMeta{Total: list.Total, Offset: list.Offset, Limit: list.Limit}}
}

// attributesResponse is the body of GET attributes; the library returns a
// non-nil map, so attributes is {} and never null.
type attributesResponse struct {
	Attributes map[string]string `json:"attributes"`
}

// mappersResponse is the body of GET claim-mappers; the library returns a
// non-nil slice, so mappers is [] and never null.
type mappersResponse struct {
	Mappers []identity.ClaimMapper `json:"mappers"`
}

// claimsResponse is the body of GET claims; the library returns a non-nil
// map, so claims is {} and never null.
type claimsResponse struct {
	Claims map[string]string `json:"claims"`
}

// writeJSON answers status with v as JSON. Encoding comes first, so a
// failure can still be answered as a problem.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	send(w, status, body)
	return nil
}

// writeCreated answers 201 with v and the Location of the new resource id
// in the collection r posted to. The Location is the path as the handler
// received it: under http.StripPrefix it lacks the prefix.
func writeCreated(w http.ResponseWriter, r *http.Request, id int64, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Location", r.URL.Path+"/"+strconv.FormatInt(id, 10))
	send(w, http.StatusCreated, body)
	return nil
}

// send writes a JSON response. Responses are not to be cached: they hold
// personal data, and a creation response may hold a secret.
func send(w http.ResponseWriter, status int, body []byte) {
	header := w.Header()
	header.Set("Content-Type", "application/json")
	header.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(body)
}

// writeNoContent answers 204 when the operation succeeded, and returns its
// error otherwise.
func writeNoContent(w http.ResponseWriter, err error) error {
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
