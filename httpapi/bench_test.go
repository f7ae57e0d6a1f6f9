package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/identitylib/identity"
)

// The benchmarks compare, for one request, three handlers over the same
// in-memory Service of benchUsers users:
//
//   - bare writes the response bytes with the response headers and does
//     nothing else: the floor of httptest's own cost;
//   - direct is the least code that does the job: Authorize, the one
//     library call, json.Marshal, write;
//   - adapter is the handler of httpapi.New (routing, auth, encoding, the
//     log line into a text slog handler).
//
// adapter/direct is the adapter's overhead; direct/bare is the library's
// and encoding's share.
//
//	go test -run '^$' -bench . -benchmem ./httpapi/
const benchUsers = 10_000

// benchHash is an argon2id PHC string at the default parameters that every
// benchmark user shares, so loading them hashes nothing.
const benchHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$4mELq7hNUzGZvyZXLgouEc8/BWwYXjaTIDhSdkbPjyo"

// newBenchEnv returns a test environment whose workspace "acme" holds
// benchUsers users with three attributes each.
func newBenchEnv(b *testing.B) *testEnv {
	b.Helper()
	e := newTestEnv(b)
	batch := make([]identity.ImportedUser, 0, benchUsers)
	for i := 1; i <= benchUsers; i++ {
		name := fmt.Sprintf("user%05d", i)
		batch = append(batch, identity.ImportedUser{
			Username: name, Email: name + "@example.com", FullName: fmt.Sprintf("Person %d", i), PasswordHash: benchHash,
			Attributes: map[string]string{"department": "dept" + strconv.Itoa(i%50), "tier": "gold", "employee_id": strconv.Itoa(i)},
		})
	}
	if _, err := e.ws.ImportUsers(context.Background(), batch); err != nil {
		b.Fatal(err)
	}
	return e
}

// benchCase is one request, and the library work a direct handler does for
// it once authorized.
type benchCase struct {
	path   func(i int) string // the path of the i-th request
	scope  identity.Scope
	direct func(ctx context.Context, ws *identity.Workspace, i int) (any, error)
}

func BenchmarkGetUser(b *testing.B) {
	runBench(b, benchCase{
		path:  func(i int) string { return "/t/acme/api/v1/users/" + strconv.Itoa(i) },
		scope: identity.ScopeUsersRead,
		direct: func(ctx context.Context, ws *identity.Workspace, i int) (any, error) {
			return ws.GetUser(ctx, int64(i))
		},
	})
}

func BenchmarkGetAttributes(b *testing.B) {
	runBench(b, benchCase{
		path:  func(i int) string { return "/t/acme/api/v1/users/" + strconv.Itoa(i) + "/attributes" },
		scope: identity.ScopeUserAttributesRead,
		direct: func(ctx context.Context, ws *identity.Workspace, i int) (any, error) {
			attrs, err := ws.ListAttributes(ctx, int64(i))
			return map[string]any{"attributes": attrs}, err
		},
	})
}

// BenchmarkSearchUsers searches a prefix that ten users match
// ("user0123" finds user01230 to user01239).
func BenchmarkSearchUsers(b *testing.B) {
	search := func(i int) string { return fmt.Sprintf("user%04d", i%1000) }
	runBench(b, benchCase{
		path:  func(i int) string { return "/t/acme/api/v1/users?search=" + search(i) },
		scope: identity.ScopeUsersRead,
		direct: func(ctx context.Context, ws *identity.Workspace, i int) (any, error) {
			list, err := ws.ListUsers(ctx, search(i), nil)
			return map[string]any{"data": list.Items, "meta": map[string]int{"total": list.Total, "offset": list.Offset, "limit": list.Limit}}, err
		},
	})
}

// runBench runs the bare, direct and adapter handlers of bc over requests
// spread across the users.
func runBench(b *testing.B, bc benchCase) {
	e := newBenchEnv(b)
	const spread = 1024
	reqs := make([]*http.Request, spread)
	ids := make([]int, spread)
	for i := range reqs {
		ids[i] = i*7919%benchUsers + 1
		reqs[i] = httptest.NewRequest("GET", bc.path(ids[i]), nil)
		reqs[i].Header.Set("Authorization", "Bearer "+e.allKey)
	}
	// The bare handler writes what the adapter answers the first request.
	sample := httptest.NewRecorder()
	e.api.ServeHTTP(sample, reqs[0])
	if sample.Code != http.StatusOK {
		b.Fatalf("status %d: %s", sample.Code, sample.Body.String())
	}
	body := sample.Body.Bytes()

	bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	})
	i := 0 // which request the direct handler serves
	direct := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Authorization")[len("Bearer "):]
		a, err := e.svc.AuthorizeAPIKey(r.Context(), key, "acme", bc.scope)
		if err != nil {
			b.Fatal(err)
		}
		ws := a.Workspace
		v, err := bc.direct(r.Context(), ws, ids[i%spread])
		if err != nil {
			b.Fatal(err)
		}
		out, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		w.Write(out)
	})
	for _, h := range []struct {
		name    string
		handler http.Handler
	}{{"bare", bare}, {"direct", direct}, {"adapter", e.api}} {
		b.Run(h.name, func(b *testing.B) {
			i = 0
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.handler.ServeHTTP(rec, reqs[i%spread])
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
				}
				if i++; i%spread == 0 {
					e.logs.Reset() // keep the captured log from growing
				}
			}
		})
	}
}
