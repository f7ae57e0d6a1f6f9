package httpapi

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/identitylib/identity"
)

// Branding: how the hosted pages and the emails present the workspace
// (its name for people, its accent colour and its logo), and the logos of
// OAuth clients, which share the logo functions here. routes names each
// function with its scopes.

// brandingResponse is the body of GET and PUT /branding: the branding as
// set ("" for an unset member, so that a client can tell a default from a
// choice) and what the pages show for it.
type brandingResponse struct {
	DisplayName          string `json:"displayName"`
	AccentColor          string `json:"accentColor"`
	EffectiveName        string `json:"effectiveName"`
	EffectiveAccentColor string `json:"effectiveAccentColor"`
}

// brandingOf describes the branding b of the workspace slug.
func brandingOf(b identity.Branding, slug string) brandingResponse {
	return brandingResponse{
		DisplayName: b.DisplayName, AccentColor: b.AccentColor,
		EffectiveName: b.Name(slug), EffectiveAccentColor: b.Accent(),
	}
}

// getBranding answers the workspace's branding.
func getBranding(ctx context.Context, w http.ResponseWriter, c *call) error {
	s, err := c.ws.GetSettings(ctx)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, brandingOf(s.Branding, c.ws.Slug()))
}

// putBranding replaces the branding, and nothing else of the settings (the
// library changes it alone, in one transaction). An absent member is
// unset, so the default applies: a PUT states the whole branding. It
// answers as getBranding does.
func putBranding(ctx context.Context, w http.ResponseWriter, c *call) error {
	var b identity.Branding
	if err := decodeBody(w, c.r, field("displayName", &b.DisplayName), field("accentColor", &b.AccentColor)); err != nil {
		return err
	}
	if err := c.ws.SetBranding(ctx, b); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, brandingOf(b, c.ws.Slug()))
}

// putLogo sets the workspace's logo from the PNG body (see readLogo).
func putLogo(ctx context.Context, w http.ResponseWriter, c *call) error {
	data, err := readLogo(w, c.r)
	if err != nil {
		return err
	}
	logo, err := c.ws.SetLogo(ctx, data)
	if err != nil {
		return err
	}
	return writeLogoMeta(w, logo)
}

// getLogo answers the workspace's logo as a PNG (see writeLogo).
func getLogo(ctx context.Context, w http.ResponseWriter, c *call) error {
	ifNoneMatch, err := parseCondition(c.r.Header, "If-None-Match")
	if err != nil {
		return err
	}
	logo, err := c.ws.GetLogo(ctx)
	if err != nil {
		return err
	}
	writeLogo(w, ifNoneMatch, logo)
	return nil
}

// deleteLogo removes the workspace's logo; 404 when it has none.
func deleteLogo(ctx context.Context, w http.ResponseWriter, c *call) error {
	return writeNoContent(w, c.ws.DeleteLogo(ctx))
}

// maxLogoBody bounds the body of a logo PUT: the library's own bound, so
// that a larger upload is refused before it is read whole, with the 413
// every too large body gets.
const maxLogoBody = identity.MaxLogoBytes

// readLogo reads the body of a logo PUT: the PNG itself, not JSON.
// Errors: a Content-Type other than image/png 415 (parameters are
// allowed and ignored), a body over maxLogoBody 413 (before reading it
// when its Content-Length says so), a body that cannot be read 400.
// Whether the bytes are a PNG within the bounds is the library's rule
// (422 on "logo").
func readLogo(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != "image/png" {
		return nil, &problem{Status: http.StatusUnsupportedMediaType, Code: codeUnsupportedMediaType,
			Detail: "the request body must be the logo as image/png"}
	}
	if r.ContentLength > maxLogoBody {
		return nil, tooLargeFor(maxLogoBody)
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxLogoBody))
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return nil, tooLargeFor(maxLogoBody)
	}
	if err != nil {
		return nil, &problem{Status: http.StatusBadRequest, Code: codeMalformedJSON, Detail: "the request body could not be read"}
	}
	return data, nil
}

// writeLogoMeta answers a logo PUT: 200 with the logo's contentType,
// updatedAt and etag, and its ETag, for the next conditional GET.
func writeLogoMeta(w http.ResponseWriter, logo identity.Logo) error {
	w.Header().Set("ETag", logo.ETag)
	return writeJSON(w, http.StatusOK, logo)
}

// logoCacheControl lets a client keep a logo but not use it unchecked: a
// GET with If-None-Match then costs a 304. It is private, as the request
// carried a key.
const logoCacheControl = "private, no-cache"

// writeLogo answers a logo GET: 304 when If-None-Match matches its ETag
// (weakly, or "*"), else 200 with the PNG. The image was re-encoded by the
// library, and nosniff keeps a browser from taking it for anything else.
func writeLogo(w http.ResponseWriter, ifNoneMatch conditionHeader, logo identity.Logo) {
	header := w.Header()
	header.Set("ETag", logo.ETag)
	header.Set("Cache-Control", logoCacheControl)
	header.Set("X-Content-Type-Options", "nosniff")
	same := ifNoneMatch.star
	for _, t := range ifNoneMatch.tags {
		if `"`+t.opaque+`"` == logo.ETag {
			same = true
		}
	}
	if same {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	header.Set("Content-Type", logo.ContentType)
	w.WriteHeader(http.StatusOK)
	w.Write(logo.Data)
}
