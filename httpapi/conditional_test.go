package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store"
)

// etagPattern is the form of every ETag the API sends.
var etagPattern = regexp.MustCompile(`^"[0-9a-f]{16}"$`)

// etagOf returns the ETag of a version, as the API writes it.
func etagOf(version int64) string { return fmt.Sprintf(`"%016x"`, version) }

// wantETag fails the test unless rec carries a well-formed ETag, and
// returns it.
func wantETag(tb testing.TB, rec *httptest.ResponseRecorder) string {
	tb.Helper()
	got := rec.Header().Get("ETag")
	if !etagPattern.MatchString(got) {
		tb.Fatalf("ETag %q, want a strong tag of 16 hex digits", got)
	}
	return got
}

// TestETags: the user's version is its ETag on POST, GET and PUT, and
// every write changes it; a mapper's on GET and PUT.
func TestETags(t *testing.T) {
	e := newTestEnv(t)
	created := e.do(t, "POST", base+"/users", e.allKey, newUserBody("ada", "ada@example.com"))
	wantStatus(t, created, http.StatusCreated)
	tag := wantETag(t, created)
	got := e.do(t, "GET", base+"/users/1", e.allKey, nil)
	wantStatus(t, got, http.StatusOK)
	if g := wantETag(t, got); g != tag {
		t.Errorf("GET ETag %s, POST gave %s", g, tag)
	}
	u, err := e.ws.GetUser(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := etagOf(u.Version); tag != want {
		t.Errorf("ETag %s, want the version's %s", tag, want)
	}
	updated := e.do(t, "PUT", base+"/users/1", e.allKey, map[string]any{"email": "ada@lovelace.org", "fullName": "Ada"})
	wantStatus(t, updated, http.StatusOK)
	if newTag := wantETag(t, updated); newTag == tag || newTag != wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil)) {
		t.Errorf("PUT ETag %s: want a new one (old %s) that GET then serves", newTag, tag)
	}
	// Writes beside the user's own JSON (disabling is one) change it too.
	before := wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil))
	wantNoContent(t, e.do(t, "DELETE", base+"/users/1", e.allKey, nil))
	if after := wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil)); after == before {
		t.Error("disabling left the ETag as it was")
	}

	put := e.do(t, "PUT", base+"/claim-mappers/dept", e.allKey, map[string]any{"claimName": "department"})
	wantNoContent(t, put)
	mapperTag := wantETag(t, put)
	rec := e.do(t, "GET", base+"/claim-mappers/dept", e.allKey, nil)
	wantJSON(t, rec, http.StatusOK, `{"attributeKey":"dept","claimName":"department","includeInAccess":true,"includeInId":false}`)
	if g := wantETag(t, rec); g != mapperTag {
		t.Errorf("GET mapper ETag %s, PUT gave %s", g, mapperTag)
	}
	wantProblem(t, e.do(t, "GET", base+"/claim-mappers/nosuch", e.allKey, nil), http.StatusNotFound, "not_found")
}

// TestLostUpdatePrevented: two clients read the same user and both write
// with the ETag they read: one write wins, the other is 412, and the
// stored user is the winner's write.
func TestLostUpdatePrevented(t *testing.T) {
	t.Run("one after the other", func(t *testing.T) {
		e := newTestEnv(t)
		e.createUser(t, "ada")
		tagA := wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil))
		tagB := wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil))
		first := e.do(t, "PUT", base+"/users/1", e.allKey, map[string]any{"email": "a@example.com", "fullName": "Client A"}, "If-Match", tagA)
		second := e.do(t, "PUT", base+"/users/1", e.allKey, map[string]any{"email": "b@example.com", "fullName": "Client B"}, "If-Match", tagB)
		wantJSON(t, first, http.StatusOK, userJSON("1", "ada", "a@example.com", "Client A", true))
		wantProblem(t, second, http.StatusPreconditionFailed, "precondition_failed")
		wantJSON(t, e.do(t, "GET", base+"/users/1", e.allKey, nil), http.StatusOK, userJSON("1", "ada", "a@example.com", "Client A", true))
	})
	t.Run("at once", func(t *testing.T) {
		for range 20 {
			e := newTestEnv(t)
			e.createUser(t, "ada")
			tag := wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil))
			recs := make([]*httptest.ResponseRecorder, 2)
			var wg sync.WaitGroup
			for i, name := range []string{"Client A", "Client B"} {
				wg.Go(func() {
					recs[i] = e.do(t, "PUT", base+"/users/1", e.allKey, map[string]any{"email": "ada@example.com", "fullName": name}, "If-Match", tag)
				})
			}
			wg.Wait()
			var winner *httptest.ResponseRecorder
			for _, rec := range recs {
				switch rec.Code {
				case http.StatusOK:
					if winner != nil {
						t.Fatal("both writes succeeded")
					}
					winner = rec
				case http.StatusPreconditionFailed:
					wantProblem(t, rec, http.StatusPreconditionFailed, "precondition_failed")
				default:
					t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
				}
			}
			if winner == nil {
				t.Fatal("no write succeeded")
			}
			stored := e.do(t, "GET", base+"/users/1", e.allKey, nil)
			if diff := cmp.Diff(winner.Body.String(), stored.Body.String()); diff != "" {
				t.Errorf("stored user is not the winning write (-winner +stored):\n%s", diff)
			}
			if diff := cmp.Diff(winner.Header().Get("ETag"), stored.Header().Get("ETag")); diff != "" {
				t.Errorf("stored ETag (-winner +stored):\n%s", diff)
			}
		}
	})
}

// TestConditionalUserPut: If-Match and If-None-Match on PUT of a user.
func TestConditionalUserPut(t *testing.T) {
	const current, stale = "{current}", "{stale}"
	tests := []struct {
		name   string
		header []string // with {current} and {stale} for the user's ETags
		status int
		code   string
	}{
		{"no condition", nil, 200, ""},
		{"If-Match current", []string{"If-Match", current}, 200, ""},
		{"If-Match stale", []string{"If-Match", stale}, 412, "precondition_failed"},
		{"If-Match one of two", []string{"If-Match", stale + ", " + current}, 200, ""},
		{"If-Match in two fields", []string{"If-Match", stale, "If-Match", current}, 200, ""},
		{"If-Match star", []string{"If-Match", "*"}, 200, ""},
		{"If-Match weak current", []string{"If-Match", "W/" + current}, 412, "precondition_failed"},
		{"If-Match foreign tag", []string{"If-Match", `"v1"`}, 412, "precondition_failed"},
		{"If-Match uppercase hex", []string{"If-Match", `"00000000000000FF"`}, 412, "precondition_failed"},
		{"If-None-Match star", []string{"If-None-Match", "*"}, 412, "precondition_failed"},
		{"If-None-Match current", []string{"If-None-Match", current}, 412, "precondition_failed"},
		{"If-None-Match weak current", []string{"If-None-Match", "W/" + current}, 412, "precondition_failed"},
		{"If-None-Match stale", []string{"If-None-Match", stale}, 200, ""},
		{"If-Match unquoted", []string{"If-Match", "abc"}, 400, "malformed_precondition"},
		{"If-Match star and tag", []string{"If-Match", "*, " + current}, 400, "malformed_precondition"},
		{"If-Match unterminated", []string{"If-Match", `"abc`}, 400, "malformed_precondition"},
		{"If-None-Match junk after tag", []string{"If-None-Match", current + " x"}, 400, "malformed_precondition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.createUser(t, "ada")
			staleTag := wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil))
			wantNoContent(t, e.do(t, "DELETE", base+"/users/1", e.allKey, nil))
			before := e.do(t, "GET", base+"/users/1", e.allKey, nil)
			currentTag := wantETag(t, before)
			tags := strings.NewReplacer(current, currentTag, stale, staleTag)
			header := make([]string, len(tt.header))
			for i, h := range tt.header {
				header[i] = tags.Replace(h)
			}
			rec := e.do(t, "PUT", base+"/users/1", e.allKey, map[string]any{"email": "ada@lovelace.org", "fullName": "Countess"}, header...)
			after := e.do(t, "GET", base+"/users/1", e.allKey, nil)
			if tt.code != "" {
				wantProblem(t, rec, tt.status, tt.code)
				if diff := cmp.Diff(before.Body.String(), after.Body.String()); diff != "" {
					t.Errorf("a refused PUT changed the user (-before +after):\n%s", diff)
				}
				return
			}
			wantJSON(t, rec, tt.status, userJSON("1", "ada", "ada@lovelace.org", "Countess", false))
		})
	}
	t.Run("missing user is 404", func(t *testing.T) {
		e := newTestEnv(t)
		for _, h := range [][]string{{"If-Match", "*"}, {"If-Match", `"0000000000000001"`}, {"If-None-Match", "*"}} {
			rec := e.do(t, "PUT", base+"/users/7", e.allKey, map[string]any{"email": "x@example.com", "fullName": "X"}, h...)
			wantProblem(t, rec, http.StatusNotFound, "not_found")
		}
	})
}

// TestConditionalMapperPut: If-Match: * updates only, If-None-Match: *
// creates only, If-Match with a tag updates only that version.
func TestConditionalMapperPut(t *testing.T) {
	tests := []struct {
		name     string
		existing bool
		header   []string // "{current}" stands for the mapper's ETag
		status   int
		code     string
	}{
		{"create only, missing", false, []string{"If-None-Match", "*"}, 204, ""},
		{"create only, existing", true, []string{"If-None-Match", "*"}, 412, "precondition_failed"},
		{"update only, missing", false, []string{"If-Match", "*"}, 412, "precondition_failed"},
		{"update only, existing", true, []string{"If-Match", "*"}, 204, ""},
		{"current version", true, []string{"If-Match", "{current}"}, 204, ""},
		{"another version", true, []string{"If-Match", `"0000000000000001"`}, 412, "precondition_failed"},
		{"a version, missing", false, []string{"If-Match", `"0000000000000001"`}, 412, "precondition_failed"},
		{"malformed", true, []string{"If-None-Match", "**"}, 400, "malformed_precondition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			path := base + "/claim-mappers/dept"
			current := ""
			if tt.existing {
				current = wantETag(t, e.do(t, "PUT", path, e.allKey, map[string]any{"claimName": "department"}))
			}
			header := append([]string(nil), tt.header...)
			for i := range header {
				if header[i] == "{current}" {
					header[i] = current
				}
			}
			before := e.do(t, "GET", base+"/claim-mappers", e.allKey, nil).Body.String()
			rec := e.do(t, "PUT", path, e.allKey, map[string]any{"claimName": "dept", "includeInId": true}, header...)
			after := e.do(t, "GET", base+"/claim-mappers", e.allKey, nil).Body.String()
			if tt.code != "" {
				wantProblem(t, rec, tt.status, tt.code)
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("a refused PUT changed the mappers (-before +after):\n%s", diff)
				}
				return
			}
			wantNoContent(t, rec)
			tag := wantETag(t, rec)
			if tag == current {
				t.Errorf("ETag %s unchanged by the write", tag)
			}
			got := e.do(t, "GET", path, e.allKey, nil)
			wantJSON(t, got, http.StatusOK, `{"attributeKey":"dept","claimName":"dept","includeInAccess":true,"includeInId":true}`)
			if g := wantETag(t, got); g != tag {
				t.Errorf("GET ETag %s, PUT gave %s", g, tag)
			}
		})
	}
}

// TestNotModified: GET answers a matching If-None-Match with 304 and the
// ETag, and no body.
func TestNotModified(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	for _, path := range []string{base + "/users/1", base + "/claim-mappers/dept"} {
		tag := wantETag(t, e.do(t, "GET", path, e.allKey, nil))
		tests := []struct {
			ifNoneMatch string
			status      int
		}{
			{tag, 304},
			{"W/" + tag, 304},
			{`"0000000000000001", ` + tag, 304},
			{"*", 304},
			{`"0000000000000001"`, 200},
			{"nonsense", 400},
		}
		for _, tt := range tests {
			t.Run(path+" "+tt.ifNoneMatch, func(t *testing.T) {
				rec := e.do(t, "GET", path, e.allKey, nil, "If-None-Match", tt.ifNoneMatch)
				switch tt.status {
				case 304:
					wantStatus(t, rec, 304)
					if rec.Body.Len() != 0 || rec.Header().Get("ETag") != tag {
						t.Errorf("304 with body %q and ETag %q; want no body and %s", rec.Body.String(), rec.Header().Get("ETag"), tag)
					}
				case 200:
					wantStatus(t, rec, 200)
					if got := wantETag(t, rec); got != tag {
						t.Errorf("ETag %s, want %s", got, tag)
					}
				default:
					wantProblem(t, rec, tt.status, "malformed_precondition")
				}
			})
		}
	}
}

// TestVersionZeroETag: a user stored before versions existed (version 0)
// has an ETag all the same, and If-Match with it works.
func TestVersionZeroETag(t *testing.T) {
	e := newTestEnv(t)
	e.createUser(t, "ada")
	err := e.store.Update(t.Context(), func(tx store.Tx) error {
		rec, err := tx.User("acme", 1)
		if err != nil {
			return err
		}
		rec.Version = 0
		return tx.PutUser("acme", rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	tag := wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil))
	if tag != `"0000000000000000"` {
		t.Errorf("ETag %s, want the zero version's", tag)
	}
	rec := e.do(t, "PUT", base+"/users/1", e.allKey, map[string]any{"email": "ada@example.com", "fullName": "Ada L"}, "If-Match", tag)
	wantStatus(t, rec, http.StatusOK)
	if wantETag(t, rec) == tag {
		t.Error("the write kept version 0")
	}
	u, err := e.ws.GetUser(t.Context(), 1)
	if err != nil || u.FullName != "Ada L" {
		t.Errorf("user %+v, %v; want the update", u, err)
	}
}

// TestConditionalAttributeWrite: PUT and DELETE of an attribute take
// If-Match and If-None-Match against the user's ETag, as PUT of the
// user does, change nothing when they do not hold, and answer with the
// user's new ETag, which GET of the user then serves.
func TestConditionalAttributeWrite(t *testing.T) {
	const current, stale = "{current}", "{stale}"
	tests := []struct {
		name   string
		header []string // with {current} and {stale} for the user's ETags
		status int
		code   string
	}{
		{"no condition", nil, 204, ""},
		{"If-Match current", []string{"If-Match", current}, 204, ""},
		{"If-Match stale", []string{"If-Match", stale}, 412, "precondition_failed"},
		{"If-Match one of two", []string{"If-Match", stale + ", " + current}, 204, ""},
		{"If-Match star", []string{"If-Match", "*"}, 204, ""},
		{"If-Match weak current", []string{"If-Match", "W/" + current}, 412, "precondition_failed"},
		{"If-None-Match star", []string{"If-None-Match", "*"}, 412, "precondition_failed"},
		{"If-None-Match current", []string{"If-None-Match", current}, 412, "precondition_failed"},
		{"If-None-Match stale", []string{"If-None-Match", stale}, 204, ""},
		{"If-Match unquoted", []string{"If-Match", "abc"}, 400, "malformed_precondition"},
	}
	for _, method := range []string{"PUT", "DELETE"} {
		for _, tt := range tests {
			t.Run(method+" "+tt.name, func(t *testing.T) {
				e := newTestEnv(t)
				e.seed(t) // ada has dept=eng
				staleTag := wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil))
				wantNoContent(t, e.do(t, "PUT", base+"/users/1/attributes/tier", e.allKey, map[string]any{"value": "gold"}))
				currentTag := wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil))
				if currentTag == staleTag {
					t.Fatalf("setting an attribute left the user's ETag %s as it was", currentTag)
				}
				tags := strings.NewReplacer(current, currentTag, stale, staleTag)
				header := make([]string, len(tt.header))
				for i, h := range tt.header {
					header[i] = tags.Replace(h)
				}
				var body any
				if method == "PUT" {
					body = map[string]any{"value": "ops"}
				}
				rec := e.do(t, method, base+"/users/1/attributes/dept", e.allKey, body, header...)
				attrs := e.do(t, "GET", base+"/users/1/attributes", e.allKey, nil)
				if tt.code != "" {
					wantProblem(t, rec, tt.status, tt.code)
					wantJSON(t, attrs, 200, `{"attributes":{"dept":"eng","tier":"gold"}}`)
					if now := wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil)); now != currentTag {
						t.Errorf("a refused write changed the user's ETag from %s to %s", currentTag, now)
					}
					return
				}
				wantNoContent(t, rec)
				want := `{"attributes":{"dept":"ops","tier":"gold"}}`
				if method == "DELETE" {
					want = `{"attributes":{"tier":"gold"}}`
				}
				wantJSON(t, attrs, 200, want)
				newTag := wantETag(t, rec)
				if newTag == currentTag || newTag != wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil)) {
					t.Errorf("ETag %s: want a new one (old %s) that GET of the user then serves", newTag, currentTag)
				}
			})
		}
	}
	t.Run("missing user is 404", func(t *testing.T) {
		e := newTestEnv(t)
		for _, h := range [][]string{{"If-Match", "*"}, {"If-Match", `"0000000000000001"`}, {"If-None-Match", "*"}} {
			wantProblem(t, e.do(t, "PUT", base+"/users/7/attributes/k", e.allKey, map[string]any{"value": "v"}, h...), http.StatusNotFound, "not_found")
			wantProblem(t, e.do(t, "DELETE", base+"/users/7/attributes/k", e.allKey, nil, h...), http.StatusNotFound, "not_found")
		}
	})
	// A write of the user that commits after the request's If-Match was
	// written and before its write begins is seen by the condition (one
	// transaction with the write); one that commits just after the write
	// is not in the ETag answered, which is the write's own.
	for _, method := range []string{"PUT", "DELETE"} {
		t.Run(method+" racing a write of the user", func(t *testing.T) {
			e := newTestEnv(t)
			e.seed(t)
			tag := wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil))
			var body any
			if method == "PUT" {
				body = map[string]any{"value": "ops"}
			}
			other := func(fullName string) func() {
				return func() {
					if _, err := e.ws.UpdateUser(t.Context(), 1, identity.UserUpdate{Email: "ada@example.com", FullName: fullName}); err != nil {
						t.Error(err)
					}
				}
			}
			before := other("Ada King")
			e.store.beforeUpdate.Store(&before)
			wantProblem(t, e.do(t, method, base+"/users/1/attributes/dept", e.allKey, body, "If-Match", tag),
				http.StatusPreconditionFailed, "precondition_failed")
			wantJSON(t, e.do(t, "GET", base+"/users/1/attributes", e.allKey, nil), 200, `{"attributes":{"dept":"eng"}}`)

			tag = wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil))
			var written string
			after := func() {
				u, err := e.ws.GetUser(t.Context(), 1)
				if err != nil {
					t.Error(err)
				}
				written = etagOf(u.Version)
				other("Ada Lovelace")()
			}
			e.store.afterUpdate.Store(&after)
			rec := e.do(t, method, base+"/users/1/attributes/dept", e.allKey, body, "If-Match", tag)
			wantNoContent(t, rec)
			if got := wantETag(t, rec); got != written {
				t.Errorf("ETag %s, want %s, the version the write left", got, written)
			}
		})
	}
	t.Run("missing attribute is 404 after the condition", func(t *testing.T) {
		e := newTestEnv(t)
		e.seed(t)
		tag := wantETag(t, e.do(t, "GET", base+"/users/1", e.allKey, nil))
		wantProblem(t, e.do(t, "DELETE", base+"/users/1/attributes/nosuch", e.allKey, nil, "If-Match", tag), http.StatusNotFound, "not_found")
		wantProblem(t, e.do(t, "DELETE", base+"/users/1/attributes/nosuch", e.allKey, nil, "If-Match", `"0000000000000001"`),
			http.StatusPreconditionFailed, "precondition_failed")
	})
}
