package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/identitylib/identity/internal/testutil"

	"github.com/google/go-cmp/cmp"
	"github.com/identitylib/identity"
	"github.com/identitylib/identity/httpapi"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// testNow is the fixed clock of every test Service. It is not in UTC, so
// that bodies show the API turning times into UTC.
var testNow = time.Date(2025, 3, 14, 16, 9, 26, 535897000, time.FixedZone("CET", 3600))

// testNowJSON is testNow as the API writes it.
const testNowJSON = "2025-03-14T15:09:26.535897Z"

// testEnv is one Service over an in-memory store, its REST handler, the
// log the handler writes, and API keys of workspace "acme": one per scope
// and one with every scope. Workspace "other" exists too, with a key.
type testEnv struct {
	svc   *identity.Service
	ws    *identity.Workspace
	store *faultyStore
	// api is the handler httpapi.New returns; benchmarks measure it alone.
	api http.Handler
	// report receives the OpenAPI validator's findings; a fuzz target points
	// it at each input's test.
	report *reporter
	// handler is what every test request goes through (see do): api, or api
	// wrapped by test middleware.
	handler http.Handler
	// prefix, when set, mounts handler under it with http.StripPrefix.
	prefix string
	// ctx, when set, is the context of requests.
	ctx  context.Context
	logs *testutil.SyncBuffer

	// client is the id of the OAuth client seed registers; a request
	// path's "{client}" stands for it (see do).
	client string

	keys     map[identity.Scope]string // "acme" keys with exactly one scope
	allKey   string                    // "acme" key with every scope
	otherKey string                    // "other" key with every scope
}

// newTestEnv builds the environment; it is the one place a handler is
// constructed.
func newTestEnv(tb testing.TB) *testEnv {
	tb.Helper()
	ctx := context.Background()
	st := &faultyStore{Store: memstore.New()}
	svc, err := identity.New(st, &identity.Options{
		Now:             func() time.Time { return testNow },
		PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1},
		// As identityd over a bbolt file has it (the store's default).
		KeyCacheTTL: identity.KeyCacheNoExpiry,
		// Passkeys are registered through the library with a fake
		// ceremony (passkeys_test.go); the API only lists and removes them.
		IssuerBase:      "https://id.example.com",
		PasskeyCeremony: passkeyCeremony{},
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Close() })
	e := &testEnv{svc: svc, store: st, logs: &testutil.SyncBuffer{}, keys: map[identity.Scope]string{}}
	logger := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.api = httpapi.New(svc, &httpapi.Options{Logger: logger})
	e.report = &reporter{t: tb}
	e.handler = openAPIValidator(tb, e.report)(e.api)

	if e.ws, err = svc.CreateWorkspace(ctx, "acme", nil); err != nil {
		tb.Fatal(err)
	}
	for _, scope := range identity.Scopes() {
		e.keys[scope] = mustKey(tb, e.ws, scope)
	}
	e.allKey = mustKey(tb, e.ws, identity.Scopes()...)
	other, err := svc.CreateWorkspace(ctx, "other", nil)
	if err != nil {
		tb.Fatal(err)
	}
	e.otherKey = mustKey(tb, other, identity.Scopes()...)
	return e
}

func mustKey(tb testing.TB, ws *identity.Workspace, scopes ...identity.Scope) string {
	tb.Helper()
	created, err := ws.CreateAPIKey(context.Background(), "test", scopes)
	if err != nil {
		tb.Fatal(err)
	}
	key := created.Secret
	return key
}

// pngBody is a request body do sends as image/png.
type pngBody []byte

// do sends one request to the handler and returns the response. key, when
// not empty, is sent as a Bearer credential; "{client}" in path stands for
// e.client. body is nil (no body), a string or []byte (sent as is), a
// pngBody (sent as is, as image/png) or any other value (sent as its
// JSON); a body but a pngBody is sent as application/json. header holds
// name, value pairs applied last: a name's first pair replaces the
// header, a later pair adds a value, and an empty value removes the
// header.
func (e *testEnv) do(tb testing.TB, method, path, key string, body any, header ...string) *httptest.ResponseRecorder {
	tb.Helper()
	path = strings.ReplaceAll(path, "{client}", e.client)
	contentType := "application/json"
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	case pngBody:
		r, contentType = bytes.NewReader(b), "image/png"
	default:
		data, err := json.Marshal(b)
		if err != nil {
			tb.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req := httptest.NewRequest(method, e.prefix+path, r)
	if e.ctx != nil {
		req = req.WithContext(e.ctx)
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(header); i += 2 {
		name, value := header[i], header[i+1]
		switch {
		case value == "":
			req.Header.Del(name)
		case seen[name]:
			req.Header.Add(name, value)
		default:
			req.Header.Set(name, value)
		}
		seen[name] = true
	}
	var h http.Handler = e.handler
	if e.prefix != "" {
		h = http.StripPrefix(e.prefix, h)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// createUser creates a user through the library, with a password derived
// from the username.
func (e *testEnv) createUser(tb testing.TB, username string) identity.User {
	tb.Helper()
	u, err := e.ws.CreateUser(context.Background(), identity.NewUser{
		Username: username, Email: username + "@example.com", FullName: strings.ToUpper(username[:1]) + username[1:],
		Password: "pw-" + username + "-long",
	})
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// seed gives workspace "acme" one of everything: user 1 "ada" with the
// attribute dept=eng; role 1 "admin", assigned to ada directly, and role 2
// "viewer"; group 1 "staff", with ada as its member, carrying role 1; a
// mapper of dept; webhook endpoint 1; a logo; and the confidential OAuth
// client "web" (e.client), with a logo.
func (e *testEnv) seed(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	u := e.createUser(tb, "ada")
	if _, err := e.ws.SetAttribute(ctx, u.ID, "dept", "eng", nil); err != nil {
		tb.Fatal(err)
	}
	admin, err := e.ws.CreateRole(ctx, identity.NewRole{Name: "admin"})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := e.ws.CreateRole(ctx, identity.NewRole{Name: "viewer"}); err != nil {
		tb.Fatal(err)
	}
	if err := e.ws.AssignRole(ctx, u.ID, admin.ID); err != nil {
		tb.Fatal(err)
	}
	staff, err := e.ws.CreateGroup(ctx, identity.NewGroup{Name: "staff"})
	if err != nil {
		tb.Fatal(err)
	}
	if err := e.ws.AddGroupMember(ctx, staff.ID, u.ID); err != nil {
		tb.Fatal(err)
	}
	if err := e.ws.AssignGroupRole(ctx, staff.ID, admin.ID); err != nil {
		tb.Fatal(err)
	}
	if _, err := e.ws.SetClaimMapper(ctx, "dept", identity.ClaimMapperSpec{ClaimName: "department"}); err != nil {
		tb.Fatal(err)
	}
	if _, err := e.ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://hooks.example.com/a", Events: []string{"user.created"}}); err != nil {
		tb.Fatal(err)
	}
	if _, err := e.ws.SetLogo(ctx, testPNG(tb, 2, 1)); err != nil {
		tb.Fatal(err)
	}
	client, err := e.ws.CreateClient(ctx, identity.NewClient{Name: "web", RedirectURIs: []string{"https://app.example.com/cb"}})
	if err != nil {
		tb.Fatal(err)
	}
	e.client = client.Client.ID
	if _, err := e.ws.SetClientLogo(ctx, e.client, testPNG(tb, 1, 2)); err != nil {
		tb.Fatal(err)
	}
}

// faultyStore is a store.Store that can be made to fail: with panicking
// set, View panics; with failing set, View returns an internal failure.
// It counts the View calls, and keeps the identity.RequestInfo of the
// context of the last View or Update. beforeUpdate and afterUpdate, when
// set, run once, before the next Update begins or after it returns: a
// write of another client that commits just then.
type faultyStore struct {
	store.Store
	panicking    atomic.Bool
	failing      atomic.Bool
	views        atomic.Int64
	lastInfo     atomic.Pointer[identity.RequestInfo]
	beforeUpdate atomic.Pointer[func()]
	afterUpdate  atomic.Pointer[func()]
}

func (s *faultyStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	info := identity.RequestInfoFrom(ctx)
	s.lastInfo.Store(&info)
	if f := s.beforeUpdate.Swap(nil); f != nil {
		(*f)()
	}
	err := s.Store.Update(ctx, fn)
	if f := s.afterUpdate.Swap(nil); f != nil {
		(*f)()
	}
	return err
}

// errDiskOnFire is the failure of a failing faultyStore; its text must
// reach the log and never a response.
var errDiskOnFire = errors.New("disk on fire at /var/lib/identity/secret-path")

func (s *faultyStore) View(ctx context.Context, fn func(store.Tx) error) error {
	s.views.Add(1)
	info := identity.RequestInfoFrom(ctx)
	s.lastInfo.Store(&info)
	if s.panicking.Load() {
		panic("boom: store exploded at /var/lib/identity/secret-path")
	}
	if s.failing.Load() {
		return errDiskOnFire
	}
	return s.Store.View(ctx, fn)
}

// logLines returns the lines written to b.
func logLines(b *testutil.SyncBuffer) []string {
	s := strings.TrimSuffix(b.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// decode returns the JSON body of rec as generic values (numbers as
// float64), for exact comparisons with cmp.Diff.
func decode(tb testing.TB, rec *httptest.ResponseRecorder) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		tb.Fatalf("body %q is not JSON: %v", rec.Body.String(), err)
	}
	return v
}

// wantStatus fails the test unless rec has the status.
func wantStatus(tb testing.TB, rec *httptest.ResponseRecorder, status int) {
	tb.Helper()
	if rec.Code != status {
		tb.Fatalf("status %d, want %d; body: %s", rec.Code, status, rec.Body.String())
	}
}

// wantJSON fails the test unless rec has the status and a JSON body equal
// to want (given as a JSON text).
func wantJSON(tb testing.TB, rec *httptest.ResponseRecorder, status int, want string) {
	tb.Helper()
	wantStatus(tb, rec, status)
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type %q, want application/json", ct)
	}
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		tb.Fatalf("bad want %q: %v", want, err)
	}
	if diff := cmp.Diff(w, decode(tb, rec)); diff != "" {
		tb.Errorf("body mismatch (-want +got):\n%s", diff)
	}
}

// problemBody is the problem+json body as the tests read it.
type problemBody struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail"`
	Code   string       `json:"code"`
	Errors []fieldError `json:"errors,omitempty"`
}

type fieldError struct {
	Field   string `json:"field"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// wantProblem fails the test unless rec is a problem+json response with the
// status and code, and with exactly the fields and rules of wantFields
// (each "field rule"), if given. It returns the problem.
func wantProblem(tb testing.TB, rec *httptest.ResponseRecorder, status int, code string, wantFields ...string) problemBody {
	tb.Helper()
	wantStatus(tb, rec, status)
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		tb.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	var p problemBody
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		tb.Fatalf("problem body %q: %v", rec.Body.String(), err)
	}
	if p.Type != "about:blank" || p.Status != status || p.Title != http.StatusText(status) || p.Code != code || p.Detail == "" {
		tb.Errorf("problem %+v, want about:blank, status %d, title %q, code %q and a detail", p, status, http.StatusText(status), code)
	}
	if len(wantFields) > 0 {
		var got []string
		for _, f := range p.Errors {
			got = append(got, f.Field+" "+f.Rule)
			if f.Message == "" {
				tb.Errorf("field error %+v has no message", f)
			}
		}
		if diff := cmp.Diff(wantFields, got); diff != "" {
			tb.Errorf("problem errors mismatch (-want +got):\n%s", diff)
		}
	}
	return p
}
