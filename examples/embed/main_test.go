package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/identitylib/identity/internal/testutil"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/memstore"
)

// newService returns an in-memory Service with the workspace acme and a
// key for its users.
func newService(t *testing.T) (*identity.Service, string) {
	t.Helper()
	ctx := context.Background()
	svc, err := identity.New(memstore.New(), &identity.Options{
		PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1}, // fast, for tests only
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	created, err := ws.CreateAPIKey(ctx, "test", []identity.Scope{identity.ScopeUsersRead, identity.ScopeUsersWrite})
	if err != nil {
		t.Fatal(err)
	}
	key := created.Secret
	return svc, key
}

// do sends a request and returns the status and the body.
func do(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestMux(t *testing.T) {
	svc, key := newService(t)
	srv := httptest.NewServer(newMux(svc))
	defer srv.Close()

	for path, want := range map[string]string{"/hello": "hello from the host application\n", "/healthz": "ok\n"} {
		if status, body := do(t, http.MethodGet, srv.URL+path, "", ""); status != http.StatusOK || body != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, status, body, want)
		}
	}

	users := srv.URL + "/identity/t/acme/api/v1/users"
	status, body := do(t, http.MethodPost, users, key,
		`{"username":"ada","email":"ada@example.com","fullName":"Ada Lovelace","password":"analytical engine"}`)
	var created struct{ ID int64 }
	if status != http.StatusCreated || json.Unmarshal([]byte(body), &created) != nil || created.ID <= 0 {
		t.Fatalf("POST %s: %d %s", users, status, body)
	}
	status, body = do(t, http.MethodGet, users+"?search=ad", key, "")
	if status != http.StatusOK || !strings.Contains(body, `"username":"ada"`) {
		t.Errorf("GET %s: %d %s", users, status, body)
	}

	for _, tt := range []struct {
		name, method, url, key string
		want                   int
	}{
		{"no key", http.MethodGet, users, "", http.StatusUnauthorized},
		{"not under the prefix", http.MethodGet, srv.URL + "/t/acme/api/v1/users", key, http.StatusNotFound},
		{"method of another route", http.MethodPost, srv.URL + "/hello", "", http.StatusMethodNotAllowed},
	} {
		if status, body := do(t, tt.method, tt.url, tt.key, ""); status != tt.want {
			t.Errorf("%s: %s %s: %d %s, want %d", tt.name, tt.method, tt.url, status, body, tt.want)
		}
	}
}

func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := new(testutil.SyncBuffer)
	done := make(chan error, 1)
	db := filepath.Join(t.TempDir(), "embed.db")
	go func() { done <- run(ctx, []string{"-db", db, "-addr", "127.0.0.1:0"}, log) }()

	listening := regexp.MustCompile(`msg=listening addr=(\S+)`)
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == ""; time.Sleep(10 * time.Millisecond) {
		if m := listening.FindStringSubmatch(log.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("embed did not log its address; log:\n%s", log)
		}
	}
	if status, _ := do(t, http.MethodGet, "http://"+addr+"/hello", "", ""); status != http.StatusOK {
		t.Errorf("GET /hello: %d", status)
	}
	if status, _ := do(t, http.MethodGet, "http://"+addr+"/identity/t/acme/api/v1/users", "", ""); status != http.StatusUnauthorized {
		t.Errorf("GET users without a key: %d", status)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return within 10s of the cancellation")
	}
}
