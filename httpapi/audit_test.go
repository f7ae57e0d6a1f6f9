package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/httpapi"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/store/memstore"
)

// freshRequestID is the form of a request id the adapter makes itself.
var freshRequestID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// auditStart is the fake clock's time when an audit server is built.
var auditStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// auditServer is the REST API of a Service over an in-memory store on a
// fake clock, served over real HTTP (so that the peer is the test's own
// connection, 127.0.0.1) through the OpenAPI validator, with workspace
// "acme" and its keys.
type auditServer struct {
	t     *testing.T
	svc   *identity.Service
	ws    *identity.Workspace
	clock *testutil.Clock
	url   string // the API's base: {server}/t/acme/api/v1
	// alpha and beta write users, roles and attributes; reader reads the
	// trail; users reads users only.
	alpha, beta, reader, users identity.CreatedAPIKey
}

// newAuditServer builds an auditServer whose Service trusts the proxies
// trusted.
func newAuditServer(t *testing.T, trusted []netip.Prefix) *auditServer {
	t.Helper()
	ctx := t.Context()
	clock := testutil.NewClock(auditStart)
	svc, err := identity.New(memstore.New(), &identity.Options{
		Now: clock.Now, PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1},
		TrustedProxies: trusted,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	api := httpapi.New(svc, &httpapi.Options{Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(openAPIValidator(t, t)(api))
	t.Cleanup(srv.Close)
	s := &auditServer{t: t, svc: svc, clock: clock, url: srv.URL + "/t/acme/api/v1"}
	if s.ws, err = svc.CreateWorkspace(ctx, "acme", nil); err != nil {
		t.Fatal(err)
	}
	writer := []identity.Scope{identity.ScopeUsersWrite, identity.ScopeRolesWrite, identity.ScopeUserAttributesWrite}
	for _, k := range []struct {
		dst    *identity.CreatedAPIKey
		name   string
		scopes []identity.Scope
	}{
		{&s.alpha, "alpha", writer},
		{&s.beta, "beta", writer},
		{&s.reader, "reader", []identity.Scope{identity.ScopeAuditRead}},
		{&s.users, "users", []identity.Scope{identity.ScopeUsersRead}},
	} {
		if *k.dst, err = s.ws.CreateAPIKey(ctx, k.name, k.scopes); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// do sends one request over HTTP with key and body (JSON when not nil),
// the headers given as name, value pairs, and returns the response as a
// recorder, for the helpers of env_test.go.
func (s *auditServer) do(method, path string, key identity.CreatedAPIKey, body any, header ...string) *httptest.ResponseRecorder {
	s.t.Helper()
	var r io.Reader = http.NoBody
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.url+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key.Secret)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return &httptest.ResponseRecorder{Code: res.StatusCode, HeaderMap: res.Header, Body: bytes.NewBuffer(data)}
}

// page reads GET /audit with the query as reader, wanting a 200.
func (s *auditServer) page(query string) identity.AuditPage {
	s.t.Helper()
	rec := s.do("GET", "/audit?"+query, s.reader, nil)
	wantStatus(s.t, rec, http.StatusOK)
	var p identity.AuditPage
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		s.t.Fatalf("audit page %s: %v", rec.Body.String(), err)
	}
	return p
}

// auditSeen is what a test compares of a record: who did what to whom,
// from where.
type auditSeen struct {
	Actor   identity.Actor
	Action  identity.AuditAction
	Target  identity.AuditTarget
	Outcome identity.AuditOutcome
	Request identity.AuditRequest
}

func seen(r identity.AuditRecord) auditSeen {
	return auditSeen{Actor: r.Actor, Action: r.Action, Target: r.Target, Outcome: r.Outcome, Request: r.Request}
}

// briefly names each record by its action and target, "user.created
// user:1", for comparing lists.
func briefly(recs []identity.AuditRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, string(r.Action)+" "+r.Target.Kind+":"+r.Target.ID)
	}
	return out
}

// TestAuditActorAndRequest: a change made with an API key is recorded
// with the key as its actor (its id and name) and the request it came
// in: the peer's address, or through a trusted proxy the address it
// forwarded, the User-Agent, and the request's id, which the answer's
// X-Request-Id names (a trusted proxy's own id, else a fresh one). The
// trail read over REST is the library's, record for record.
func TestAuditActorAndRequest(t *testing.T) {
	const ua = "provisioner/2.1"
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	tests := []struct {
		name      string
		trusted   []netip.Prefix
		header    []string
		address   string
		requestID string // "" for a fresh id
	}{
		{"no proxy", nil, nil, "127.0.0.1", ""},
		{"an untrusted peer's headers ignored", nil,
			[]string{"X-Forwarded-For", "203.0.113.9", "X-Request-Id", "chosen-by-client"}, "127.0.0.1", ""},
		{"a trusted proxy's headers honoured", loopback,
			[]string{"X-Forwarded-For", "198.51.100.4, 203.0.113.9", "X-Request-Id", "edge-42"}, "203.0.113.9", "edge-42"},
		{"a trusted proxy without headers", loopback, nil, "127.0.0.1", ""},
		{"a trusted proxy's unusable request id replaced", loopback,
			[]string{"X-Forwarded-For", "203.0.113.9", "X-Request-Id", strings.Repeat("r", 129)}, "203.0.113.9", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newAuditServer(t, tt.trusted)
			rec := s.do("POST", "/users", s.alpha,
				map[string]any{"username": "bob", "email": "bob@example.com", "fullName": "Bob", "password": "correct horse"},
				append([]string{"User-Agent", ua}, tt.header...)...)
			wantStatus(t, rec, http.StatusCreated)
			id := rec.Header().Get("X-Request-Id")
			switch {
			case tt.requestID != "" && id != tt.requestID:
				t.Errorf("X-Request-Id %q, want the proxy's %q", id, tt.requestID)
			case tt.requestID == "" && !freshRequestID.MatchString(id):
				t.Errorf("X-Request-Id %q, want a fresh id", id)
			}

			trail, err := s.ws.ListAuditRecords(t.Context(), &identity.AuditFilter{Action: string(identity.AuditUserCreated)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := []auditSeen{{
				Actor:   identity.Actor{Kind: identity.ActorAPIKey, ID: s.alpha.APIKey.ID, Display: "alpha"},
				Action:  identity.AuditUserCreated,
				Target:  identity.AuditTarget{Kind: identity.TargetUser, ID: "1", Display: "bob"},
				Outcome: identity.OutcomeSuccess,
				Request: identity.AuditRequest{Address: tt.address, UserAgent: ua, RequestID: id},
			}}
			var got []auditSeen
			for _, r := range trail.Records {
				got = append(got, seen(r))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("user.created records (-want +got):\n%s", diff)
			}

			// Over REST, the same records, as identity.AuditRecord
			// marshals them.
			all, err := s.ws.ListAuditRecords(t.Context(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(all, s.page("")); diff != "" {
				t.Errorf("GET /audit differs from ListAuditRecords (-library +REST):\n%s", diff)
			}
		})
	}
}

// TestAuditQuery: GET /audit filters by actor, target, action, outcome
// and time, newest first, each filter alone and together.
func TestAuditQuery(t *testing.T) {
	s := newAuditServer(t, nil)
	alpha, beta := s.alpha.APIKey.ID, s.beta.APIKey.ID
	// One change a minute: alpha creates ada (user 1), beta bob (user
	// 2), alpha the role admin (role 1) and ada's attribute dept.
	steps := []struct {
		method, path string
		key          identity.CreatedAPIKey
		body         any
		status       int
	}{
		{"POST", "/users", s.alpha, map[string]any{"username": "ada", "email": "ada@example.com", "fullName": "Ada", "password": "analytical engine"}, 201},
		{"POST", "/users", s.beta, map[string]any{"username": "bob", "email": "bob@example.com", "fullName": "Bob", "password": "correct horse"}, 201},
		{"POST", "/roles", s.alpha, map[string]any{"name": "admin"}, 201},
		{"PUT", "/users/1/attributes/dept", s.alpha, map[string]any{"value": "eng"}, 204},
	}
	for _, st := range steps {
		s.clock.Advance(time.Minute)
		wantStatus(t, s.do(st.method, st.path, st.key, st.body), st.status)
	}
	at := func(minutes int) string {
		return auditStart.Add(time.Duration(minutes) * time.Minute).Format(time.RFC3339)
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"actor=api_key:" + alpha, []string{"user.attribute.set user:1", "role.created role:1", "user.created user:1"}},
		{"actor=api_key:" + beta, []string{"user.created user:2"}},
		{"actor=api_key:k_nobody", []string{}},
		// An empty id names the actor that has none: no key.
		{"actor=api_key:", []string{}},
		{"actor=system:&action=workspace.", []string{"workspace.created workspace:acme"}},
		{"target=user:1", []string{"user.attribute.set user:1", "user.created user:1"}},
		{"target=role:1", []string{"role.created role:1"}},
		{"action=user.", []string{"user.attribute.set user:1", "user.created user:2", "user.created user:1"}},
		{"action=role.created", []string{"role.created role:1"}},
		{"actor=api_key:" + alpha + "&action=user.", []string{"user.attribute.set user:1", "user.created user:1"}},
		{"actor=api_key:" + alpha + "&target=user:2", []string{}},
		{"action=user.&outcome=success", []string{"user.attribute.set user:1", "user.created user:2", "user.created user:1"}},
		{"action=user.&outcome=failure", []string{}},
		{"actor=api_key:" + alpha + "&since=" + at(2), []string{"user.attribute.set user:1", "role.created role:1"}},
		{"action=user.created&until=" + at(2), []string{"user.created user:1"}},
		{"action=user.&since=" + at(2) + "&until=" + at(4), []string{"user.created user:2"}},
		{"action=user.&since=" + at(5), []string{}},
		// An empty value is as if absent.
		{"actor=&target=&action=role.&outcome=&since=&until=&cursor=&limit=", []string{"role.created role:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			p := s.page(tt.query)
			if diff := cmp.Diff(tt.want, briefly(p.Records)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if p.HasMore || p.NextCursor != "" {
				t.Errorf("hasMore %v, nextCursor %q on the only page", p.HasMore, p.NextCursor)
			}
		})
	}
}

// TestAuditPaging: limit and cursor page through the trail, newest
// first; a record written meanwhile does not shift the pages that follow
// (it sits before the first), and hasMore is exact.
func TestAuditPaging(t *testing.T) {
	s := newAuditServer(t, nil)
	for _, name := range []string{"ada", "bob", "cy"} {
		s.clock.Advance(time.Minute)
		wantStatus(t, s.do("POST", "/users", s.alpha, map[string]any{"username": name, "email": name + "@example.com",
			"fullName": name, "password": "correct horse " + name}), 201)
	}
	const filter = "action=user.created&limit=2"
	first := s.page(filter)
	if diff := cmp.Diff([]string{"user.created user:3", "user.created user:2"}, briefly(first.Records)); diff != "" {
		t.Errorf("first page (-want +got):\n%s", diff)
	}
	if len(first.Records) != 2 {
		t.Fatalf("first page: %d records, want 2", len(first.Records))
	}
	if !first.HasMore || first.NextCursor != first.Records[1].ID {
		t.Fatalf("first page: hasMore %v, nextCursor %q, want true and the last record's id %q", first.HasMore, first.NextCursor, first.Records[1].ID)
	}
	// A user created between the pages.
	s.clock.Advance(time.Minute)
	wantStatus(t, s.do("POST", "/users", s.beta, map[string]any{"username": "dee", "email": "dee@example.com",
		"fullName": "Dee", "password": "correct horse dee"}), 201)
	second := s.page(filter + "&cursor=" + first.NextCursor)
	if diff := cmp.Diff([]string{"user.created user:1"}, briefly(second.Records)); diff != "" {
		t.Errorf("second page (-want +got):\n%s", diff)
	}
	if second.HasMore || second.NextCursor != "" {
		t.Errorf("last page: hasMore %v, nextCursor %q, want false and none", second.HasMore, second.NextCursor)
	}
	// A page that ends exactly at the last record says there is no more.
	exact := s.page("action=user.created&limit=4")
	if diff := cmp.Diff([]string{"user.created user:4", "user.created user:3", "user.created user:2", "user.created user:1"}, briefly(exact.Records)); diff != "" {
		t.Errorf("page of 4 (-want +got):\n%s", diff)
	}
	if exact.HasMore || exact.NextCursor != "" {
		t.Errorf("page of every record: hasMore %v, nextCursor %q", exact.HasMore, exact.NextCursor)
	}
	// The default page holds them all.
	if got := len(s.page("action=user.created").Records); got != 4 {
		t.Errorf("default page: %d records, want 4", got)
	}
}

// TestAuditScope: the trail needs audit:read; a key without it is
// refused with the challenge naming it, and the trail is not read.
func TestAuditScope(t *testing.T) {
	s := newAuditServer(t, nil)
	for _, key := range []identity.CreatedAPIKey{s.users, s.alpha} {
		rec := s.do("GET", "/audit", key, nil)
		wantProblem(t, rec, http.StatusForbidden, "forbidden")
		if got, want := rec.Header().Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="audit:read"`; got != want {
			t.Errorf("WWW-Authenticate %q, want %q", got, want)
		}
	}
	wantProblem(t, s.do("GET", "/audit", identity.CreatedAPIKey{Secret: "idk_nope"}, nil), http.StatusUnauthorized, "unauthenticated")
}

// TestAuditBadQuery: a malformed or unknown filter is 422, code invalid
// as on every list,
// naming every parameter at fault, whether the adapter finds it (the
// forms of actor, target, since, until and limit) or the library (the
// values).
func TestAuditBadQuery(t *testing.T) {
	s := newAuditServer(t, nil)
	tests := []struct {
		query  string
		fields []string
	}{
		{"actor=api_key", []string{"actor format"}},
		{"actor=robot:1", []string{"actor unknown"}},
		{"actor=:k_1", []string{"actor required"}},
		{"target=user", []string{"target format"}},
		{"target=planet:3", []string{"target unknown"}},
		{"target=:3", []string{"target required"}},
		{"action=user.renamed", []string{"action unknown"}},
		{"action=nothing.", []string{"action unknown"}},
		{"outcome=maybe", []string{"outcome unknown"}},
		{"since=yesterday", []string{"since format"}},
		{"until=2026-13-01T00:00:00Z", []string{"until format"}},
		{"since=2026-03-01", []string{"since format"}},
		{"cursor=abc", []string{"cursor format"}},
		{"limit=0", []string{"limit range"}},
		{"limit=101", []string{"limit range"}},
		{"limit=-1", []string{"limit range"}},
		{"limit=x", []string{"limit type"}},
		{"limit=99999999999999999999", []string{"limit range"}},
		{"actor=x&target=y&since=z&until=w&limit=v", []string{"actor format", "target format", "since format", "until format", "limit type"}},
		{"actor=robot:1&target=planet:3&action=nope&outcome=maybe&cursor=abc",
			[]string{"actor unknown", "target unknown", "action unknown", "outcome unknown", "cursor format"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			wantProblem(t, s.do("GET", "/audit?"+tt.query, s.reader, nil), http.StatusUnprocessableEntity, "invalid", tt.fields...)
		})
	}
	wantProblem(t, s.do("GET", "/audit?limit=%zz", s.reader, nil), http.StatusBadRequest, "malformed_query")
}
