package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/identitylib/identity"
)

// answer is what a request came to: its status and challenge, and how
// many read transactions it ran.
type answer struct {
	Status int
	Auth   string // WWW-Authenticate
	Views  int64
}

// send does one request and returns its answer.
func (e *testEnv) send(t *testing.T, method, path, key string) answer {
	t.Helper()
	before := e.store.views.Load()
	rec := e.do(t, method, path, key, nil)
	return answer{rec.Code, rec.Header().Get("WWW-Authenticate"), e.store.views.Load() - before}
}

// TestReadIsOneTransaction: a read with a key used before runs one
// transaction, the route's own; the key's first use reads it once more.
func TestReadIsOneTransaction(t *testing.T) {
	e := newTestEnv(t)
	e.seed(t)
	key := mustKey(t, e.ws, identity.ScopeUsersRead, identity.ScopeUserAttributesRead)
	var got []answer
	for _, path := range []string{
		"/t/acme/api/v1/users/1", "/t/acme/api/v1/users/1", "/t/acme/api/v1/users/1/attributes", "/t/acme/api/v1/users?search=a",
	} {
		got = append(got, e.send(t, http.MethodGet, path, key))
	}
	want := []answer{{200, "", 2}, {200, "", 1}, {200, "", 1}, {200, "", 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GETs mismatch (-want +got):\n%s", diff)
	}
}

// TestKeyStopsWorkingAtOnce: for each way a key stops being good for a
// workspace, the very next request with it is refused, though the key
// answered the request before from the Service's key cache.
func TestKeyStopsWorkingAtOnce(t *testing.T) {
	tests := []struct {
		name string
		// stop makes the key stop working on path; it returns the path to
		// request next.
		stop func(t *testing.T, e *testEnv, id string) string
		want answer
	}{
		{
			name: "RevokeAPIKey",
			stop: func(t *testing.T, e *testEnv, id string) string {
				if err := e.ws.RevokeAPIKey(context.Background(), id); err != nil {
					t.Fatal(err)
				}
				return "/t/acme/api/v1/users/1"
			},
			want: answer{http.StatusUnauthorized, "Bearer", 1},
		},
		{
			name: "Service.DeleteWorkspace",
			stop: func(t *testing.T, e *testEnv, _ string) string {
				if _, err := e.svc.DeleteWorkspace(context.Background(), "acme"); err != nil {
					t.Fatal(err)
				}
				return "/t/acme/api/v1/users/1"
			},
			want: answer{http.StatusUnauthorized, "Bearer", 1},
		},
		{
			name: "another workspace's path",
			stop: func(*testing.T, *testEnv, string) string { return "/t/other/api/v1/users/1" },
			want: answer{http.StatusForbidden, "", 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.seed(t)
			created, err := e.ws.CreateAPIKey(context.Background(), "", []identity.Scope{identity.ScopeUsersRead})
			if err != nil {
				t.Fatal(err)
			}
			k, key := created.APIKey, created.Secret
			e.send(t, http.MethodGet, "/t/acme/api/v1/users/1", key)
			if got := e.send(t, http.MethodGet, "/t/acme/api/v1/users/1", key); got != (answer{200, "", 1}) {
				t.Fatalf("before: %+v, want a 200 from the key cache", got)
			}
			path := tt.stop(t, e, k.ID)
			got := []answer{e.send(t, http.MethodGet, path, key), e.send(t, http.MethodGet, path, key)}
			if diff := cmp.Diff([]answer{tt.want, tt.want}, got); diff != "" {
				t.Errorf("after %s, mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}
