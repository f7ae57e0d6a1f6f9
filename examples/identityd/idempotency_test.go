package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/memstore"
)

// exchange is what a client sees of one response.
type exchange struct {
	Status   int
	Location string
	ETag     string
	Body     string
}

// postKeyed POSTs body to url with the key and an Idempotency-Key.
func postKeyed(t *testing.T, url, key, idemKey string, body any) exchange {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idemKey)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return exchange{resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("ETag"), string(out)}
}

// TestIdempotencyAcrossRestart: a POST with an Idempotency-Key whose
// response the client lost is retried against a restarted server (killed
// with SIGKILL, so nothing but the database carries over): the retry gets
// the identical response, the webhook's secret included, and nothing more
// is created.
func TestIdempotencyAcrossRestart(t *testing.T) {
	db, key := newDB(t)
	p := startServe(t, db)
	userURL := p.base + "/t/acme/api/v1/users"
	hookURL := p.base + "/t/acme/api/v1/webhooks"
	hook := map[string]any{"url": "https://hooks.example.com/identity", "events": []string{"user.created"}}
	firstUser := postKeyed(t, userURL, key, "user-ada-1", newUser("ada"))
	firstHook := postKeyed(t, hookURL, key, "hook-1", hook)
	if firstUser.Status != http.StatusCreated || firstHook.Status != http.StatusCreated {
		t.Fatalf("first requests: %+v, %+v", firstUser, firstHook)
	}
	p.signal(t, syscall.SIGKILL)
	p.wait(t, procWait)

	p = startServe(t, db)
	userURL = p.base + "/t/acme/api/v1/users"
	hookURL = p.base + "/t/acme/api/v1/webhooks"
	if diff := cmp.Diff(firstUser, postKeyed(t, userURL, key, "user-ada-1", newUser("ada"))); diff != "" {
		t.Errorf("user retry after the restart (-first +retry):\n%s", diff)
	}
	if diff := cmp.Diff(firstHook, postKeyed(t, hookURL, key, "hook-1", hook)); diff != "" {
		t.Errorf("webhook retry after the restart (-first +retry):\n%s", diff)
	}
	if got := postKeyed(t, userURL, key, "user-ada-1", newUser("bob")); got.Status != http.StatusUnprocessableEntity {
		t.Errorf("the key with another body: %+v, want 422", got)
	}
	for _, list := range []string{userURL, hookURL} {
		status, body := call(t, http.MethodGet, list, key, nil)
		var page struct{ Meta struct{ Total int } }
		if err := json.Unmarshal(body, &page); status != http.StatusOK || err != nil || page.Meta.Total != 1 {
			t.Errorf("GET %s: %d %s; want one item", list, status, body)
		}
	}
}

// TestSweeperDeletesExpiredRecords: serve's sweeper deletes expired
// idempotency records as soon as it starts, and stops when told.
func TestSweeperDeletesExpiredRecords(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := memstore.New()
	svc, err := identity.New(st, &identity.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if _, err := svc.CreateWorkspace(ctx, "acme", nil); err != nil {
		t.Fatal(err)
	}
	err = st.Update(ctx, func(tx store.Tx) error {
		for _, r := range []store.IdempotencyRecord{
			{Workspace: "acme", Scope: "s", Key: "old", ExpiresAt: now.Add(-time.Second), Done: true, Result: []byte("{}")},
			{Workspace: "acme", Scope: "s", Key: "live", ExpiresAt: now.Add(time.Hour), Done: true, Result: []byte("{}")},
		} {
			if err := tx.PutIdempotency(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	log := new(testutil.SyncBuffer)
	stop := startSweeper(ctx, svc, slog.New(slog.NewTextHandler(log, nil)), time.Hour)
	waitFor(t, log, regexp.MustCompile(`msg="swept expired idempotency records" count=1`), procWait)
	stop()
	err = st.View(ctx, func(tx store.Tx) error {
		if _, err := tx.Idempotency("acme", "s", "old"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("expired record: %v, want not found", err)
		}
		_, err := tx.Idempotency("acme", "s", "live")
		return err
	})
	if err != nil {
		t.Errorf("live record: %v", err)
	}
}
