package oidc

import (
	"bytes"
	"net/http"
	"net/url"

	"github.com/identitylib/identity"
)

// pathLogo serves the workspace's logo, and with ?client=ID a client's.
const pathLogo = "logo"

// logoMaxAge is how long a browser may show a logo without asking again,
// in seconds: a changed logo shows within five minutes, and the ETag
// makes asking again cheap.
const logoMaxAge = "300"

// serveLogo answers the workspace's logo, or with ?client= the client's:
// a PNG the library re-encoded, with its ETag (If-None-Match answers 304)
// and caching for logoMaxAge; a 404 when there is none.
func (h *Handler) serveLogo(w http.ResponseWriter, r *http.Request, rq *request) {
	var logo identity.Logo
	var err error
	if q := r.URL.Query(); q.Has("client") {
		id := q.Get("client")
		if id == "" || len(id) > maxTokenBytes {
			h.notFound(w, r)
			return
		}
		logo, err = rq.ws.GetClientLogo(r.Context(), id)
	} else {
		logo, err = rq.ws.GetLogo(r.Context())
	}
	switch identity.ErrorCode(err) {
	case "":
	case identity.CodeNotFound:
		h.notFound(w, r)
		return
	default:
		h.internalError(w, r, rq.ws.Slug(), err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "image/png")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	hd.Set("Cache-Control", "public, max-age="+logoMaxAge)
	hd.Set("ETag", logo.ETag)
	// ServeContent answers If-None-Match (304), HEAD and ranges.
	http.ServeContent(w, r, "", logo.UpdatedAt, bytes.NewReader(logo.Data))
}

// clientLogo returns the URL of the client's logo, or "" when it has
// none (or it cannot be read: the page shows the client's name anyway).
func (h *Handler) clientLogo(r *http.Request, rq *pageRequest, clientID string) string {
	if clientID == "" {
		return ""
	}
	switch _, err := rq.ws.GetClientLogo(r.Context(), clientID); identity.ErrorCode(err) {
	case "":
		return rq.issuer + "/" + pathLogo + "?client=" + url.QueryEscape(clientID)
	case identity.CodeNotFound:
	default:
		h.logFailure(r.Context(), r, err)
	}
	return ""
}
