package oidc_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzProtocolQuery: whatever the query string and body of a request to
// the token, introspection, revocation or userinfo endpoint, a non-empty
// query is refused with 400 invalid_request before anything else, and no
// request is answered with a 5xx.
func FuzzProtocolQuery(f *testing.F) {
	p := newProvider(f)
	endpoints := []string{"token", "introspect", "revoke", "userinfo"}
	auth := basic(p.web.Client.ID, p.web.Secret)
	f.Add(uint8(0), "client_secret="+url.QueryEscape(p.web.Secret), "grant_type=client_credentials&client_id="+p.web.Client.ID, false)
	f.Add(uint8(0), "", "grant_type=client_credentials", true)
	f.Add(uint8(0), "?", "grant_type=client_credentials", true)
	f.Add(uint8(1), "token=x", "", true)
	f.Add(uint8(2), "token=x&token_type_hint=refresh_token", "token=y", true)
	f.Add(uint8(3), "access_token=idat_x", "", false)
	f.Add(uint8(3), "%zz", "access_token=%zz", false)
	f.Add(uint8(0), "x", "grant_type=refresh_token&refresh_token="+strings.Repeat("a", 5000), true)
	f.Fuzz(func(t *testing.T, which uint8, query, body string, withAuth bool) {
		endpoint := endpoints[int(which)%len(endpoints)]
		req := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/t/acme/" + endpoint, RawQuery: query},
			Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, Host: "127.0.0.1",
			Body: http.NoBody}
		if body != "" {
			req.Body = stringBody(body)
			req.ContentLength = int64(len(body))
		}
		if withAuth {
			req.Header.Set("Authorization", auth)
		}
		req = req.WithContext(t.Context())
		rec := p.serve(req)
		if rec.Code >= 500 {
			t.Fatalf("POST %s?%s: %d %s", endpoint, query, rec.Code, rec.Body)
		}
		if query == "" {
			return
		}
		var e struct{ Error string }
		if rec.Code != http.StatusBadRequest || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error != "invalid_request" {
			t.Fatalf("POST %s?%s: %d %s, want 400 invalid_request", endpoint, query, rec.Code, rec.Body)
		}
	})
}
