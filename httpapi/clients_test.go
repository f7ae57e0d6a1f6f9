package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/identitylib/identity"
)

// encodePNG returns a w×h PNG, stored without compression (so that the
// library's re-encoding, which compresses, differs from it), whose pixel
// (x, y) is opaque with red 40x+1, green 40y+2 and blue 3.
func encodePNG(w, h int) ([]byte, error) {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.SetNRGBA(x, y, color.NRGBA{R: uint8(40*x + 1), G: uint8(40*y + 2), B: 3, A: 255})
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.NoCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// testPNG is encodePNG for a test.
func testPNG(tb testing.TB, w, h int) []byte {
	tb.Helper()
	data, err := encodePNG(w, h)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// testPNGData is a 3×3 PNG of encodePNG, for route tables built without
// a test at hand.
var testPNGData = func() []byte {
	data, err := encodePNG(3, 3)
	if err != nil {
		panic(err) // encoding into memory does not fail
	}
	return data
}()

// pixels decodes a PNG and lists its pixels, row by row, as
// "#rrggbbaa" (non-premultiplied).
func pixels(tb testing.TB, data []byte) []string {
	tb.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("the body is not a PNG: %v", err)
	}
	var out []string
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			out = append(out, "#"+hex2(c.R)+hex2(c.G)+hex2(c.B)+hex2(c.A))
		}
	}
	return out
}

func hex2(v uint8) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[v>>4], digits[v&0xf]})
}

// The shapes of a client's id and secret, and of a logo's ETag.
var (
	clientIDPattern     = regexp.MustCompile(`^idc_[0-9a-f]{16}$`)
	clientSecretPattern = regexp.MustCompile(`^idcs_[A-Za-z0-9_-]{43}$`)
	logoETagPattern     = regexp.MustCompile(`^"[0-9a-f]{32}"$`)
)

// TestClientRoundTrip registers a confidential and a public client
// through POST /clients and reads them back: the secret is in the
// creation's answer only, every member is stored and returned, and a
// deleted client is gone.
func TestClientRoundTrip(t *testing.T) {
	e := newTestEnv(t)
	const base = "/t/acme/api/v1/clients"
	created := e.do(t, "POST", base, e.allKey, map[string]any{
		"name":                   "Portal",
		"public":                 false,
		"redirectUris":           []string{"https://portal.example.com/cb", "http://localhost:3000/cb"},
		"postLogoutRedirectUris": []string{"https://portal.example.com/bye"},
		"grantTypes":             []string{"authorization_code", "refresh_token", "client_credentials"},
		"claims":                 []string{"roles"},
	})
	wantStatus(t, created, http.StatusCreated)
	var body struct {
		Client struct{ ID string }
		Secret string
	}
	decodeInto(t, created, &body)
	id := body.Client.ID
	if !clientIDPattern.MatchString(id) {
		t.Fatalf("client id %q", id)
	}
	if !clientSecretPattern.MatchString(body.Secret) {
		t.Errorf("secret %q", body.Secret)
	}
	if got, want := created.Header().Get("Location"), base+"/"+id; got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	portal := `{"id":"` + id + `","name":"Portal","public":false,
		"redirectUris":["https://portal.example.com/cb","http://localhost:3000/cb"],
		"postLogoutRedirectUris":["https://portal.example.com/bye"],
		"grantTypes":["authorization_code","refresh_token","client_credentials"],
		"claims":["roles"],"createdAt":"` + testNowJSON + `"}`
	wantJSON(t, created, http.StatusCreated, `{"client":`+portal+`,"secret":"`+body.Secret+`"}`)
	wantJSON(t, e.do(t, "GET", base+"/"+id, e.allKey, nil), http.StatusOK, portal)

	public := e.do(t, "POST", base, e.allKey, map[string]any{"public": true, "redirectUris": []string{"https://spa.example.com/"}})
	wantStatus(t, public, http.StatusCreated)
	decodeInto(t, public, &body)
	spa := `{"id":"` + body.Client.ID + `","name":"","public":true,"redirectUris":["https://spa.example.com/"],
		"postLogoutRedirectUris":[],"grantTypes":["authorization_code","refresh_token"],"claims":[],
		"createdAt":"` + testNowJSON + `"}`
	wantJSON(t, public, http.StatusCreated, `{"client":`+spa+`}`)

	list := e.do(t, "GET", base, e.allKey, nil)
	wantStatus(t, list, http.StatusOK)
	if strings.Contains(list.Body.String(), "secret") || strings.Contains(list.Body.String(), "idcs_") {
		t.Errorf("the list shows a secret: %s", list.Body)
	}
	var listed struct{ Clients []map[string]any }
	decodeInto(t, list, &listed)
	var ids []string
	for _, c := range listed.Clients {
		ids = append(ids, c["id"].(string))
	}
	wantIDs := []string{id, body.Client.ID}
	if wantIDs[0] > wantIDs[1] {
		wantIDs[0], wantIDs[1] = wantIDs[1], wantIDs[0] // the library lists by id
	}
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Errorf("listed ids (-want +got):\n%s", diff)
	}

	wantStatus(t, e.do(t, "DELETE", base+"/"+id, e.allKey, nil), http.StatusNoContent)
	wantProblem(t, e.do(t, "GET", base+"/"+id, e.allKey, nil), http.StatusNotFound, "not_found")
	wantProblem(t, e.do(t, "DELETE", base+"/"+id, e.allKey, nil), http.StatusNotFound, "not_found")
	wantJSON(t, e.do(t, "GET", base, e.allKey, nil), http.StatusOK, `{"clients":[`+spa+`]}`)
}

// TestClientListEmpty: no client is {"clients": []}, never null.
func TestClientListEmpty(t *testing.T) {
	e := newTestEnv(t)
	wantJSON(t, e.do(t, "GET", "/t/acme/api/v1/clients", e.keys[identity.ScopeClientsRead], nil), http.StatusOK, `{"clients":[]}`)
}

// TestCreateClientRefusals: bodies the adapter or the library refuses,
// each with the fields it names, and no client registered.
func TestCreateClientRefusals(t *testing.T) {
	const cb = "https://app.example.com/cb"
	tests := []struct {
		name   string
		body   any
		header []string
		status int
		code   string
		fields []string
	}{
		{"wrong types", map[string]any{"name": 1, "public": "yes", "redirectUris": cb, "postLogoutRedirectUris": []int{1},
			"grantTypes": "refresh_token", "claims": map[string]any{}}, nil, 422, "invalid",
			[]string{"name type", "public type", "redirectUris type", "postLogoutRedirectUris type", "grantTypes type", "claims type"}},
		{"no redirect uri", map[string]any{"name": "x"}, nil, 422, "invalid", []string{"redirectUris required"}},
		{"bad values", map[string]any{"redirectUris": []string{"http://app.example.com/cb"},
			"postLogoutRedirectUris": []string{cb + "#x"}, "grantTypes": []string{"password"}, "claims": []string{"email"}},
			nil, 422, "invalid", []string{"redirectUris[0] loopback_only", "postLogoutRedirectUris[0] format", "grantTypes[0] unknown", "claims[0] unknown"}},
		{"public client credentials", map[string]any{"public": true, "redirectUris": []string{cb}, "grantTypes": []string{"client_credentials"}},
			nil, 422, "invalid", []string{"grantTypes[0] not_allowed"}},
		{"idempotency key", map[string]any{"redirectUris": []string{cb}}, []string{"Idempotency-Key", "k1"}, 422, "invalid",
			[]string{"Idempotency-Key not_allowed"}},
		{"not json", `{"redirectUris":`, nil, 400, "malformed_json", nil},
		{"form body", "redirectUris=x", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "unsupported_media_type", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			rec := e.do(t, "POST", "/t/acme/api/v1/clients", e.keys[identity.ScopeClientsWrite], tt.body, tt.header...)
			wantProblem(t, rec, tt.status, tt.code, tt.fields...)
			if clients, err := e.ws.ListClients(context.Background()); err != nil || len(clients) != 0 {
				t.Errorf("clients %v (%v), want none", clients, err)
			}
		})
	}
}

// TestClientNotFound: an id that names no client, of the right shape or
// not, is 404 on every route below /clients/{clientId}; so is a logo the
// client does not have.
func TestClientNotFound(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	if err := e.ws.DeleteClientLogo(context.Background(), e.client); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"idc_0000000000000000", "nope", "{client}"} {
		for _, rt := range []struct {
			method, suffix string
			body           any
		}{
			{"GET", "", nil},
			{"DELETE", "", nil},
			{"GET", "/logo", nil},
			{"PUT", "/logo", pngBody(testPNGData)},
			{"DELETE", "/logo", nil},
		} {
			if id == "{client}" && (rt.suffix == "" || rt.method == "PUT") {
				continue // the client exists: only its missing logo is 404
			}
			t.Run(rt.method+" "+id+rt.suffix, func(t *testing.T) {
				rec := e.do(t, rt.method, "/t/acme/api/v1/clients/"+id+rt.suffix, e.allKey, rt.body)
				wantProblem(t, rec, http.StatusNotFound, "not_found")
			})
		}
	}
}

// logoPaths are the two logos' paths, a client's and the workspace's.
var logoPaths = []string{"/t/acme/api/v1/clients/{client}/logo", "/t/acme/api/v1/branding/logo"}

// TestLogoRoundTrip puts a PNG and reads it back: the answer is the
// library's re-encoding (other bytes, the same pixels) with its headers,
// If-None-Match is answered 304 exactly when it matches, and a deleted
// logo is 404.
func TestLogoRoundTrip(t *testing.T) {
	for _, path := range logoPaths {
		t.Run(path, func(t *testing.T) {
			e := newTestEnv(t)
			e.seed(t)
			upload := testPNG(t, 3, 2)
			put := e.do(t, "PUT", path, e.allKey, pngBody(upload))
			wantStatus(t, put, http.StatusOK)
			tag := put.Header().Get("ETag")
			if !logoETagPattern.MatchString(tag) {
				t.Fatalf("ETag %q", tag)
			}
			wantJSON(t, put, http.StatusOK, `{"contentType":"image/png","updatedAt":"`+testNowJSON+`","etag":`+strconv.Quote(tag)+`}`)

			get := e.do(t, "GET", path, e.allKey, nil)
			wantStatus(t, get, http.StatusOK)
			wantHeaders := map[string]string{"Content-Type": "image/png", "ETag": tag,
				"Cache-Control": "private, no-cache", "X-Content-Type-Options": "nosniff"}
			gotHeaders := map[string]string{}
			for name := range wantHeaders {
				gotHeaders[name] = get.Header().Get(name)
			}
			if diff := cmp.Diff(wantHeaders, gotHeaders); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			if bytes.Equal(get.Body.Bytes(), upload) {
				t.Error("the logo is served as uploaded, not re-encoded")
			}
			want := []string{"#010203ff", "#290203ff", "#510203ff", "#012a03ff", "#292a03ff", "#512a03ff"}
			if diff := cmp.Diff(want, pixels(t, get.Body.Bytes())); diff != "" {
				t.Errorf("pixels (-want +got):\n%s", diff)
			}

			for _, c := range []struct {
				ifNoneMatch string
				status      int
			}{
				{tag, http.StatusNotModified},
				{"W/" + tag, http.StatusNotModified},
				{`"0000000000000000000000000000000a", ` + tag, http.StatusNotModified},
				{"*", http.StatusNotModified},
				{`"0000000000000000000000000000000a"`, http.StatusOK},
				{strings.TrimSuffix(tag, `"`) + `0"`, http.StatusOK},
			} {
				rec := e.do(t, "GET", path, e.allKey, nil, "If-None-Match", c.ifNoneMatch)
				wantStatus(t, rec, c.status)
				if rec.Header().Get("ETag") != tag {
					t.Errorf("If-None-Match %s: ETag %q, want %q", c.ifNoneMatch, rec.Header().Get("ETag"), tag)
				}
				if c.status == http.StatusNotModified && rec.Body.Len() != 0 {
					t.Errorf("If-None-Match %s: a 304 with a body", c.ifNoneMatch)
				}
			}
			wantProblem(t, e.do(t, "GET", path, e.allKey, nil, "If-None-Match", "tag"), http.StatusBadRequest, "malformed_precondition")

			wantStatus(t, e.do(t, "DELETE", path, e.allKey, nil), http.StatusNoContent)
			wantProblem(t, e.do(t, "GET", path, e.allKey, nil), http.StatusNotFound, "not_found")
			wantProblem(t, e.do(t, "DELETE", path, e.allKey, nil), http.StatusNotFound, "not_found")
		})
	}
}

// TestLogoRefusals: what a logo PUT refuses, on both logos, leaving the
// seeded logo in place; and the largest body that is read.
func TestLogoRefusals(t *testing.T) {
	notPNG := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
	padded := func(n int) []byte { // a PNG with zeros after its end, n bytes
		return append(testPNG(t, 2, 2), make([]byte, n-len(testPNG(t, 2, 2)))...)
	}
	tests := []struct {
		name        string
		body        any
		contentType string
		status      int
		code        string
		fields      []string
	}{
		{"json", `{"logo":"x"}`, "application/json", 415, "unsupported_media_type", nil},
		{"no content type", testPNGData, "", 415, "unsupported_media_type", nil},
		{"jpeg", testPNGData, "image/jpeg", 415, "unsupported_media_type", nil},
		{"not a png", notPNG, "image/png", 422, "invalid", []string{"logo format"}},
		{"empty", []byte{}, "image/png", 422, "invalid", []string{"logo required"}},
		{"too wide", testPNG(t, 1025, 1), "image/png", 422, "invalid", []string{"logo range"}},
		{"one byte too many", padded(identity.MaxLogoBytes + 1), "image/png", 413, "body_too_large", nil},
		{"far too many", make([]byte, 1<<20), "image/png", 413, "body_too_large", nil},
		{"largest", padded(identity.MaxLogoBytes), "image/png", 200, "", nil},
		{"parameters", testPNGData, "image/png; name=logo.png", 200, "", nil},
	}
	for _, path := range logoPaths {
		for _, tt := range tests {
			t.Run(path+" "+tt.name, func(t *testing.T) {
				e := newTestEnv(t)
				e.seed(t)
				before := e.do(t, "GET", path, e.allKey, nil).Body.Bytes()
				rec := e.do(t, "PUT", path, e.allKey, tt.body, "Content-Type", tt.contentType)
				if tt.status == http.StatusOK {
					wantStatus(t, rec, tt.status)
					return
				}
				wantProblem(t, rec, tt.status, tt.code, tt.fields...)
				if after := e.do(t, "GET", path, e.allKey, nil).Body.Bytes(); !bytes.Equal(before, after) {
					t.Error("a refused PUT changed the logo")
				}
			})
		}
	}
}

// TestLogoTooLargeStreamed: a body over the bound without a
// Content-Length (chunked) is refused once it is read past the bound.
func TestLogoTooLargeStreamed(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	for _, n := range []int{identity.MaxLogoBytes + 1, 2 * identity.MaxLogoBytes} {
		req := httptest.NewRequest("PUT", "/t/acme/api/v1/branding/logo", bytes.NewReader(make([]byte, n)))
		req.ContentLength = -1
		req.Header.Set("Content-Type", "image/png")
		req.Header.Set("Authorization", "Bearer "+e.allKey)
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		wantProblem(t, rec, http.StatusRequestEntityTooLarge, "body_too_large")
	}
}

// decodeInto decodes the JSON body of rec into v.
func decodeInto(tb testing.TB, rec *httptest.ResponseRecorder, v any) {
	tb.Helper()
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		tb.Fatalf("body %q: %v", rec.Body.String(), err)
	}
}
