package oidc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/identitylib/identity"
)

// TestMapErrorRateLimited: a throttled call is 429 temporarily_unavailable
// at every endpoint, with the library's message and the wait.
func TestMapErrorRateLimited(t *testing.T) {
	err := &identity.Error{Code: identity.CodeRateLimited, Message: "too many attempts: try again in 2 minutes", RetryAfter: 90 * time.Second}
	type result struct {
		Status      int
		Error       string
		Description string
		Page        bool
		RetryAfter  time.Duration
	}
	for _, kind := range []endpointKind{atAuthorize, atToken, atResource} {
		o := mapError(kind, err)
		got := result{o.status, string(o.err.ErrorType), o.err.Description, o.page, o.retryAfter}
		want := result{http.StatusTooManyRequests, "temporarily_unavailable", "too many attempts: try again in 2 minutes", false, 90 * time.Second}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("kind %d (-want +got):\n%s", kind, diff)
		}
	}
	// A Limiter of the program's that says no wait still gets one second.
	if o := mapError(atToken, &identity.Error{Code: identity.CodeRateLimited}); o.retryAfter != time.Second {
		t.Errorf("no RetryAfter: %v", o.retryAfter)
	}
}

// TestRetryAfterSeconds: whole seconds, rounded up.
func TestRetryAfterSeconds(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{time.Nanosecond, "1"},
		{time.Second, "1"},
		{time.Second + time.Millisecond, "2"},
		{59*time.Second + 999*time.Millisecond, "60"},
		{15 * time.Minute, "900"},
	}
	for _, tt := range tests {
		if got := retryAfterSeconds(tt.d); got != tt.want {
			t.Errorf("retryAfterSeconds(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestFailRetryAfter: the JSON endpoints answer a throttled call with
// Retry-After, and no challenge, at the token endpoints as at userinfo.
func TestFailRetryAfter(t *testing.T) {
	for _, kind := range []endpointKind{atToken, atResource} {
		rq := &request{issuer: "https://id.example/t/acme", header: http.Header{}}
		s := &server{h: &Handler{}}
		ctx := context.WithValue(context.Background(), requestKey{}, rq)
		err := s.fail(ctx, kind, &identity.Error{Code: identity.CodeRateLimited, Message: "too many attempts", RetryAfter: 61500 * time.Millisecond})
		w := httptest.NewRecorder()
		op.WriteError(w, httptest.NewRequest(http.MethodPost, "/token", nil), err, nil)
		if w.Code != http.StatusTooManyRequests {
			t.Errorf("kind %d: status %d %s", kind, w.Code, w.Body)
		}
		want := http.Header{"Retry-After": {"62"}}
		if diff := cmp.Diff(want, rq.header); diff != "" {
			t.Errorf("kind %d: headers (-want +got):\n%s", kind, diff)
		}
	}
}

// TestLoggableClientID: only what has the form of a client id is logged.
func TestLoggableClientID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"idc_0123456789abcdef", true},
		{"my-app.v2~x", true},
		{"", false},
		{"a b", false},
		{"idc_x\n", false},
		{"ä", false},
		{"id%20x", false},
		{"a/b", false},
		{string(make([]byte, 64)), false},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	}
	for _, tt := range tests {
		if got := loggableClientID(tt.id); got != tt.want {
			t.Errorf("loggableClientID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}
