package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

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

// rolesResponse is the body of GET of a group's roles; the library
// returns a non-nil slice, so roles is [] and never null. A group's roles
// are bounded (the workspace's rolesPerGroup limit), so they come whole,
// like the mappers, rather than in pages.
type rolesResponse struct {
	Roles []identity.Role `json:"roles"`
}

// groupsResponse is the body of GET of a user's groups, whole for the same
// reason (the groupsPerUser limit); groups is [] and never null.
type groupsResponse struct {
	Groups []identity.Group `json:"groups"`
}

// passkeysResponse is the body of GET of a user's passkeys; passkeys is
// [] and never null.
type passkeysResponse struct {
	Passkeys []passkeyJSON `json:"passkeys"`
}

// passkeyJSON is a passkey as the API shows it: lastUsedAt null until
// it signs the user in, authenticatorName null for a model the library
// does not name.
type passkeyJSON struct {
	ID                string     `json:"id"`
	Name              string     `json:"name"`
	CreatedAt         time.Time  `json:"createdAt"`
	LastUsedAt        *time.Time `json:"lastUsedAt"`
	AAGUID            string     `json:"aaguid"`
	AuthenticatorName *string    `json:"authenticatorName"`
	BackupEligible    bool       `json:"backupEligible"`
	BackupState       bool       `json:"backupState"`
	SignCount         uint32     `json:"signCount"`
}

func passkeyOf(p identity.Passkey) passkeyJSON {
	out := passkeyJSON{ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt.UTC(), AAGUID: p.AAGUID,
		BackupEligible: p.BackupEligible, BackupState: p.BackupState, SignCount: p.SignCount}
	if !p.LastUsedAt.IsZero() {
		t := p.LastUsedAt.UTC()
		out.LastUsedAt = &t
	}
	if p.AuthenticatorName != "" {
		out.AuthenticatorName = &p.AuthenticatorName
	}
	return out
}

// userRolesResponse is the body of GET of a user's roles: each role the
// user holds, once, with its sources; roles is [] and never null.
type userRolesResponse struct {
	Roles []identity.UserRole `json:"roles"`
}

// writeJSON answers status with v as JSON: the bytes of json.Marshal,
// encoded into a recycled buffer. Encoding comes first, so a failure can
// still be answered as a problem.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer recycle(buf)
	if err := encodeJSON(buf, v); err != nil {
		return err
	}
	send(w, status, buf.Bytes())
	return nil
}

// encodeJSON writes to buf what json.Marshal returns for v: users and
// pages of users by appendUser (see userjson.go), anything else by
// encoding/json.
func encodeJSON(buf *bytes.Buffer, v any) error {
	var b []byte
	ok := false
	switch v := v.(type) {
	case identity.User:
		b, ok = appendUser(buf.AvailableBuffer(), &v)
	case pageResponse[identity.User]:
		b, ok = appendUserPage(buf.AvailableBuffer(), &v)
	}
	if ok {
		buf.Write(b) // b is buf's spare room, or a larger array buf now grows to hold
		return nil
	}
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode ends the value with a newline; Marshal does not
	return nil
}

// jsonBuffers holds the buffers writeJSON encodes into. A ResponseWriter
// copies what it is given, so a buffer is free again once Write returns.
var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxRecycled bounds the buffers kept for reuse: a rare large response
// (a user with many long attributes) should not pin its memory.
const maxRecycled = 64 << 10

// recycle returns buf to jsonBuffers, emptied, unless it grew too large.
func recycle(buf *bytes.Buffer) {
	if buf.Cap() > maxRecycled {
		return
	}
	buf.Reset()
	jsonBuffers.Put(buf)
}

// writeCreated answers 201 with v and the Location of the new resource id
// in the collection r posted to. The Location is the path as the handler
// received it: under http.StripPrefix it lacks the prefix.
func writeCreated(w http.ResponseWriter, r *http.Request, id int64, v any) error {
	return writeCreatedAt(w, r, strconv.FormatInt(id, 10), v)
}

// writeCreatedAt is writeCreated for a resource whose id is not a number
// (an OAuth client's): segment is the id as a path segment, escaped.
func writeCreatedAt(w http.ResponseWriter, r *http.Request, segment string, v any) error {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer recycle(buf)
	if err := encodeJSON(buf, v); err != nil {
		return err
	}
	w.Header().Set("Location", r.URL.Path+"/"+segment)
	send(w, http.StatusCreated, buf.Bytes())
	return nil
}

// send writes a JSON response. Responses are not to be cached: they hold
// personal data, and a creation response may hold a secret.
func send(w http.ResponseWriter, status int, body []byte) {
	header := w.Header()
	// What header.Set would store, without allocating a slice each time;
	// the slices are never written to (Header.Set replaces a value and
	// Header.Add appends to a copy, as their capacity is 1).
	header["Content-Type"] = contentTypeJSON
	header["Cache-Control"] = cacheControlNoStore
	w.WriteHeader(status)
	w.Write(body)
}

// The values of send's headers, shared by every response.
var (
	contentTypeJSON     = []string{"application/json"}
	cacheControlNoStore = []string{"no-store"}
)

// writeNoContent answers 204 when the operation succeeded, and returns its
// error otherwise.
func writeNoContent(w http.ResponseWriter, err error) error {
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
