package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestDeletedWorkspaceKeyRefused: once Service.DeleteWorkspace has
// returned, the very next request with the workspace's API key is
// refused as an unknown key (401), and the slug made again holds none of
// the old workspace's users; the other workspace's key works on.
func TestDeletedWorkspaceKeyRefused(t *testing.T) {
	e := newTestEnv(t)
	if rec := e.do(t, http.MethodPost, "/t/acme/api/v1/users", e.allKey, map[string]any{
		"username": "ada", "email": "ada@example.com", "fullName": "Ada Lovelace", "password": "correct horse battery",
	}); rec.Code != http.StatusCreated {
		t.Fatalf("POST users: %d %s", rec.Code, rec.Body)
	}
	if rec := e.do(t, http.MethodGet, "/t/acme/api/v1/users/1", e.allKey, nil); rec.Code != http.StatusOK {
		t.Fatalf("GET user before the deletion: %d %s", rec.Code, rec.Body)
	}

	if _, err := e.svc.DeleteWorkspace(context.Background(), "acme"); err != nil {
		t.Fatalf("DeleteWorkspace: %v", err)
	}
	rec := e.do(t, http.MethodGet, "/t/acme/api/v1/users/1", e.allKey, nil)
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("GET user with the deleted workspace's key: %d, WWW-Authenticate %q; want 401, Bearer",
			rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
	if rec := e.do(t, http.MethodGet, "/t/other/api/v1/users", e.otherKey, nil); rec.Code != http.StatusOK {
		t.Errorf("the other workspace's key: %d %s", rec.Code, rec.Body)
	}

	// The slug is free; the workspace made of it again is empty, and the
	// old key is no key of it either.
	ws, err := e.svc.CreateWorkspace(context.Background(), "acme", nil)
	if err != nil {
		t.Fatalf("CreateWorkspace(acme) again: %v", err)
	}
	if rec := e.do(t, http.MethodGet, "/t/acme/api/v1/users", e.allKey, nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("the old key on the workspace made again: %d, want 401", rec.Code)
	}
	key := mustKey(t, ws, "users:read")
	rec = e.do(t, http.MethodGet, "/t/acme/api/v1/users", key, nil)
	if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != `{"data":[],"meta":{"total":0,"offset":0,"limit":20}}` {
		t.Errorf("GET users of the workspace made again: %d %s; want none", rec.Code, rec.Body)
	}
}
