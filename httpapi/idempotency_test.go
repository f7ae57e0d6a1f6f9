package httpapi_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
)

// sameResponse fails the test unless two responses are the same: status,
// body byte for byte, and the headers a client acts on.
func sameResponse(tb testing.TB, first, again *httptest.ResponseRecorder) {
	tb.Helper()
	if first.Code != again.Code {
		tb.Errorf("status %d, the first response had %d", again.Code, first.Code)
	}
	if diff := cmp.Diff(first.Body.String(), again.Body.String()); diff != "" {
		tb.Errorf("body (-first +again):\n%s", diff)
	}
	for _, h := range []string{"Location", "ETag", "Content-Type", "Cache-Control"} {
		if first.Header().Get(h) != again.Header().Get(h) {
			tb.Errorf("%s %q, the first response had %q", h, again.Header().Get(h), first.Header().Get(h))
		}
	}
}

func (e *testEnv) userCount(tb testing.TB) int {
	tb.Helper()
	list, err := e.ws.ListUsers(tb.Context(), "", nil)
	if err != nil {
		tb.Fatal(err)
	}
	return list.Total
}

// TestIdempotentRetryAfterLostResponse: the response to a POST is lost
// (the client never reads it); the retry with the same key gets the same
// response, and one user (or endpoint) exists.
func TestIdempotentRetryAfterLostResponse(t *testing.T) {
	t.Run("users", func(t *testing.T) {
		e := newTestEnv(t)
		body := newUserBody("ada", "ada@example.com")
		lost := e.do(t, "POST", base+"/users", e.allKey, body, "Idempotency-Key", "3f0c-user-ada")
		retry := e.do(t, "POST", base+"/users", e.allKey, body, "Idempotency-Key", "3f0c-user-ada")
		wantJSON(t, retry, http.StatusCreated, userJSON("1", "ada", "ada@example.com", "Someone", true))
		wantETag(t, retry)
		sameResponse(t, lost, retry)
		if n := e.userCount(t); n != 1 {
			t.Errorf("%d users, want 1", n)
		}
		// Later retries still get it, after the user has changed.
		wantStatus(t, e.do(t, "PUT", base+"/users/1", e.allKey, map[string]any{"email": "ada@lovelace.org", "fullName": "Ada"}), 200)
		sameResponse(t, lost, e.do(t, "POST", base+"/users", e.allKey, body, "Idempotency-Key", "3f0c-user-ada"))
	})
	t.Run("webhooks", func(t *testing.T) {
		e := newTestEnv(t)
		body := map[string]any{"url": "https://hooks.example.com/a", "events": []string{"user.created"}}
		lost := e.do(t, "POST", base+"/webhooks", e.allKey, body, "Idempotency-Key", "hook-1")
		retry := e.do(t, "POST", base+"/webhooks", e.allKey, body, "Idempotency-Key", "hook-1")
		wantStatus(t, retry, http.StatusCreated)
		sameResponse(t, lost, retry)
		if !strings.Contains(retry.Body.String(), `"secret":"whsec_`) {
			t.Errorf("the replay lacks the secret: %s", retry.Body.String())
		}
		list, err := e.ws.ListWebhooks(t.Context(), nil)
		if err != nil || list.Total != 1 {
			t.Errorf("%d endpoints (%v), want 1", list.Total, err)
		}
	})
}

// TestIdempotentConcurrentRetries: 100 requests with one key at once
// create one user; each gets the 201 or a 409 saying the key is in use.
func TestIdempotentConcurrentRetries(t *testing.T) {
	e := newTestEnv(t)
	body := newUserBody("ada", "ada@example.com")
	const n = 100
	recs := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { recs[i] = e.do(t, "POST", base+"/users", e.allKey, body, "Idempotency-Key", "one-key") })
	}
	wg.Wait()
	var created *httptest.ResponseRecorder
	inUse := 0
	for _, rec := range recs {
		switch rec.Code {
		case http.StatusCreated:
			if created == nil {
				created = rec
			}
			sameResponse(t, created, rec)
		case http.StatusConflict:
			wantProblem(t, rec, http.StatusConflict, "idempotency_key_in_use")
			inUse++
		default:
			t.Errorf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
	if created == nil {
		t.Fatal("no request got the 201")
	}
	t.Logf("%d of %d requests were told the key is in use", inUse, n)
	if c := e.userCount(t); c != 1 {
		t.Errorf("%d users, want 1", c)
	}
	sameResponse(t, created, e.do(t, "POST", base+"/users", e.allKey, body, "Idempotency-Key", "one-key"))
}

// TestIdempotencyKeyMisuse: a key is bound to one request of one API key.
func TestIdempotencyKeyMisuse(t *testing.T) {
	e := newTestEnv(t)
	ada := newUserBody("ada", "ada@example.com")
	wantStatus(t, e.do(t, "POST", base+"/users", e.allKey, ada, "Idempotency-Key", "k"), http.StatusCreated)

	// Another body, even the same JSON written otherwise: 422.
	other := newUserBody("bob", "bob@example.com")
	wantProblem(t, e.do(t, "POST", base+"/users", e.allKey, other, "Idempotency-Key", "k"), 422, "idempotency_key_reused")
	reformatted := `{"username": "ada", "email": "ada@example.com", "fullName": "Someone", "password": "correct horse"}`
	wantProblem(t, e.do(t, "POST", base+"/users", e.allKey, reformatted, "Idempotency-Key", "k"), 422, "idempotency_key_reused")
	// The same key on the other operation: 422.
	hook := map[string]any{"url": "https://hooks.example.com/a", "events": []string{"user.created"}}
	wantProblem(t, e.do(t, "POST", base+"/webhooks", e.allKey, hook, "Idempotency-Key", "k"), 422, "idempotency_key_reused")
	// Another API key has keys of its own.
	otherKey := mustKey(t, e.ws, "users:write")
	wantStatus(t, e.do(t, "POST", base+"/users", otherKey, other, "Idempotency-Key", "k"), http.StatusCreated)
	if n := e.userCount(t); n != 2 {
		t.Errorf("%d users, want 2", n)
	}
}

// TestIdempotencyKeyHeader: the key's own rules, answered 422 naming the
// header, and nothing stored.
func TestIdempotencyKeyHeader(t *testing.T) {
	e := newTestEnv(t)
	body := newUserBody("ada", "ada@example.com")
	tests := []struct {
		name   string
		header []string
		rule   string
	}{
		{"too long", []string{"Idempotency-Key", strings.Repeat("k", 256)}, "max_length"},
		{"inner space", []string{"Idempotency-Key", "two words"}, "pattern"},
		{"not ASCII", []string{"Idempotency-Key", "clé"}, "pattern"},
		{"sent twice", []string{"Idempotency-Key", "a", "Idempotency-Key", "b"}, "duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, e.do(t, "POST", base+"/users", e.allKey, body, tt.header...), 422, "invalid", "Idempotency-Key "+tt.rule)
		})
	}
	wantStatus(t, e.do(t, "POST", base+"/users", e.allKey, body, "Idempotency-Key", strings.Repeat("~", 255)), http.StatusCreated)
}

// TestIdempotentRefusalReplayed: a refusal by the library is the key's
// outcome too; failures before the library are not stored.
func TestIdempotentRefusalReplayed(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	taken := newUserBody("ada", "other@example.com")
	first := e.do(t, "POST", base+"/users", e.allKey, taken, "Idempotency-Key", "taken")
	wantProblem(t, first, http.StatusConflict, "conflict", "username taken")
	sameResponse(t, first, e.do(t, "POST", base+"/users", e.allKey, taken, "Idempotency-Key", "taken"))

	// Malformed JSON never reaches the library: the key stays free.
	wantProblem(t, e.do(t, "POST", base+"/users", e.allKey, `{"username":`, "Idempotency-Key", "fresh"), 400, "malformed_json")
	wantStatus(t, e.do(t, "POST", base+"/users", e.allKey, newUserBody("bob", "bob@example.com"), "Idempotency-Key", "fresh"), http.StatusCreated)
}

// storedFingerprint returns the fingerprint stored for an idempotency key
// of workspace "acme" used with apiKey.
func (e *testEnv) storedFingerprint(tb testing.TB, apiKey, key string) []byte {
	tb.Helper()
	scope, ok := identity.APIKeyID(apiKey)
	if !ok {
		tb.Fatalf("malformed API key %q", apiKey)
	}
	var rec store.IdempotencyRecord
	err := e.store.View(tb.Context(), func(tx store.Tx) (err error) {
		rec, err = tx.Idempotency("acme", scope, key)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return rec.Fingerprint
}

// TestIdempotencyFingerprintKeyedWithAPIKey: the stored fingerprint is the
// HMAC-SHA-256, keyed with the caller's API key, of the method, the route
// and the body as sent; so the same body under two API keys gives two
// fingerprints, and none is a plain hash of the body.
func TestIdempotencyFingerprintKeyedWithAPIKey(t *testing.T) {
	e := newTestEnv(t)
	body := `{"username":"ada","email":"ada@example.com","fullName":"Ada","password":"analytical engine"}`
	second := mustKey(t, e.ws, identity.ScopeUsersWrite)
	wantStatus(t, e.do(t, "POST", base+"/users", e.allKey, body, "Idempotency-Key", "same"), http.StatusCreated)
	wantStatus(t, e.do(t, "POST", base+"/users", second, body, "Idempotency-Key", "same"), http.StatusConflict)

	first, again := e.storedFingerprint(t, e.allKey, "same"), e.storedFingerprint(t, second, "same")
	if bytes.Equal(first, again) {
		t.Errorf("the same body under two API keys has one fingerprint %x", first)
	}
	for _, c := range []struct {
		apiKey string
		got    []byte
	}{{e.allKey, first}, {second, again}} {
		mac := hmac.New(sha256.New, []byte(c.apiKey))
		io.WriteString(mac, "POST /t/:slug/api/v1/users\n"+body)
		if want := mac.Sum(nil); !bytes.Equal(c.got, want) {
			t.Errorf("fingerprint %x, want HMAC-SHA-256 keyed with the API key %x", c.got, want)
		}
		if plain := sha256.Sum256([]byte(body)); bytes.Equal(c.got, plain[:]) {
			t.Errorf("fingerprint %x is a plain hash of the body", c.got)
		}
	}
}
