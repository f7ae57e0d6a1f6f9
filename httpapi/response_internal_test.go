package httpapi

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/identitylib/identity"
)

// TestETag: the entity tag of a version is 16 lowercase hex digits in
// quotes, as fmt's `"%016x"` writes them.
func TestETag(t *testing.T) {
	tests := []struct {
		version int64
		want    string
	}{
		{0, `"0000000000000000"`},
		{1, `"0000000000000001"`},
		{0x1234abcd, `"000000001234abcd"`},
		{0x0123456789abcdef, `"0123456789abcdef"`},
		{math.MaxInt64, `"7fffffffffffffff"`},
		{-1, `"-000000000000001"`},
	}
	for _, tt := range tests {
		if got := etag(tt.version); got != tt.want {
			t.Errorf("etag(%d) = %s, want %s", tt.version, got, tt.want)
		}
	}
}

// TestWriteJSON: writeJSON writes the bytes of json.Marshal (HTML
// characters escaped, no trailing newline), however often its buffers
// are reused, with the JSON headers.
func TestWriteJSON(t *testing.T) {
	values := []any{
		map[string]string{"a": "<b>&</b>", "z": "\u2028"},
		struct {
			N []int  `json:"n"`
			S string `json:"s"`
		}{S: "x"},
		attributesResponse{Attributes: map[string]string{}},
		"a longer string than the ones before, so that the buffer grows",
		1,
	}
	for range 2 {
		for _, v := range values {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			if err := writeJSON(rec, 200, v); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), rec.Body.String()); diff != "" {
				t.Errorf("writeJSON(%#v) body mismatch (-want +got):\n%s", v, diff)
			}
			got := map[string][]string(rec.Header())
			if diff := cmp.Diff(map[string][]string{"Content-Type": {"application/json"}, "Cache-Control": {"no-store"}}, got); diff != "" {
				t.Errorf("writeJSON header mismatch (-want +got):\n%s", diff)
			}
		}
	}
	if err := writeJSON(httptest.NewRecorder(), 200, math.Inf(1)); err == nil {
		t.Error("writeJSON(+Inf) succeeded, want an error")
	}
}

// TestUserJSON: users and pages of users are written byte for byte as
// json.Marshal writes them, and a user json.Marshal cannot write is left
// to it (and fails alike).
func TestUserJSON(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	full := identity.User{
		ID: math.MaxInt64, Username: "a.b-c_d", Email: "x<y>&z@example.com",
		FullName:      "Ada \"Byron\" \\ Lovelace\u2028\u2029\x00\x1f\t\n\r\b\f é 日本 🙂 \xff\xfe",
		EmailVerified: true, Enabled: true, MFAEnabled: true,
		CreatedAt: time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC),
		UpdatedAt: time.Date(9999, 12, 31, 23, 59, 59, 100, cet), Version: 7,
	}
	users := []identity.User{
		full,
		{},
		{ID: 1, Username: "u", Email: "u@example.com", FullName: "U", Enabled: true,
			CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 120000000, cet)},
	}
	values := []any{
		pageResponse[identity.User]{Data: []identity.User{}, Meta: pageMeta{Total: 0, Offset: 0, Limit: 20}},
		pageResponse[identity.User]{Data: users, Meta: pageMeta{Total: 12345, Offset: 100, Limit: 3}},
		pageResponse[identity.User]{Meta: pageMeta{Limit: 1}},
	}
	for _, u := range users {
		values = append(values, u)
	}
	for _, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := encodeJSON(&buf, v); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), buf.String()); diff != "" {
			t.Errorf("encodeJSON(%#v) mismatch (-json.Marshal +got):\n%s", v, diff)
		}
	}
	// Every field of User is set in full: a field added to User shows
	// here, in json.Marshal's output, until appendUser writes it too.
	if got, ok := appendUser(nil, &full); !ok || !json.Valid(got) {
		t.Errorf("appendUser(full) = %s, %t", got, ok)
	}

	for _, bad := range []identity.User{
		{CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{UpdatedAt: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{CreatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600))},
		{UpdatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.FixedZone("", -24*3600))},
	} {
		if _, ok := appendUser(nil, &bad); ok {
			t.Errorf("appendUser(%v) = ok, want it left to json.Marshal", bad.CreatedAt)
		}
		if _, ok := appendUserPage(nil, &pageResponse[identity.User]{Data: []identity.User{{}, bad}}); ok {
			t.Errorf("appendUserPage(%v) = ok, want it left to json.Marshal", bad.CreatedAt)
		}
		if err := encodeJSON(&bytes.Buffer{}, bad); err == nil {
			t.Errorf("encodeJSON(%v) succeeded, want json.Marshal's error", bad.CreatedAt)
		}
	}
}

// FuzzAppendJSONString: appendJSONString writes any string as
// json.Marshal does.
func FuzzAppendJSONString(f *testing.F) {
	for c := range 256 {
		f.Add(string([]byte{byte(c)}))
	}
	for _, s := range []string{
		"", "plain", "<script>&amp;</script>", "\u2028\u2029", "\u2027\u202a", "é日本🙂",
		"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc3", "a\xffb\xfe", "\"\\/", "\x7f\u0080\u00a0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, want x%s", s, got, want)
		}
	})
}

// TestProblemSignInCodes: the codes of the sign-in surface each come with
// their status, a throttled call with Retry-After in whole seconds,
// rounded up and at least 1.
func TestProblemSignInCodes(t *testing.T) {
	tests := []struct {
		err        *identity.Error
		status     int
		retryAfter string
	}{
		{&identity.Error{Code: identity.CodeRateLimited, Message: "too many attempts: try again in 2 minutes", RetryAfter: 61500 * time.Millisecond}, 429, "62"},
		{&identity.Error{Code: identity.CodeRateLimited, Message: "too many attempts", RetryAfter: 15 * time.Minute}, 429, "900"},
		{&identity.Error{Code: identity.CodeRateLimited, Message: "too many attempts", RetryAfter: time.Nanosecond}, 429, "1"},
		{&identity.Error{Code: identity.CodeRateLimited, Message: "too many attempts"}, 429, "1"},
		{&identity.Error{Code: identity.CodeEmailUnverified, Message: "the email address is not verified"}, 403, ""},
		{&identity.Error{Code: identity.CodeConfirmationRequired, Message: "confirm the sign-out"}, 409, ""},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		writeProblem(rec, tt.err)
		var body struct {
			Status int
			Code   string
			Detail string
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if rec.Code != tt.status || body.Status != tt.status || body.Code != string(tt.err.Code) || body.Detail != tt.err.Message {
			t.Errorf("%s: %d %s", tt.err.Code, rec.Code, rec.Body)
		}
		if got := rec.Header().Get("Retry-After"); got != tt.retryAfter {
			t.Errorf("%s %v: Retry-After %q, want %q", tt.err.Code, tt.err.RetryAfter, got, tt.retryAfter)
		}
	}
}
