package boltstore_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
)

// indexBuckets are the indexes a file written before permanent deletion
// lacks.
var indexBuckets = []string{"user_mail", "user_auth_requests", "user_tokens", "grant_refresh_tokens"}

// TestIndexesBuiltForOlderFile: a file whose workspaces lack the indexes
// DeleteUser reads (as every file written before them does) gets them
// built from its records when it is opened, so that DeleteUser finds the
// user's mail jobs, authorization requests, tokens and refresh tokens,
// and leaves another user's.
func TestIndexesBuiltForOlderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := openStore(t, path, nil)
	mustUpdate(t, s, func(tx store.Tx) error {
		steps := []error{tx.PutWorkspace(store.Workspace{Slug: testSlug, CreatedAt: when})}
		for _, id := range []int64{1, 2} {
			name := map[int64]string{1: "ada", 2: "bob"}[id]
			grant := map[int64]string{1: "gr-ada", 2: "gr-bob"}[id]
			steps = append(steps,
				tx.PutUser(testSlug, store.User{ID: id, Username: name, Email: name + "@example.com", CreatedAt: when}),
				tx.PutAuthRequest(testSlug, store.AuthRequest{ID: "ar-" + name, ClientID: "c", UserID: id, CreatedAt: when}),
				tx.PutVerificationToken(testSlug, store.VerificationToken{ID: "vt-" + name, UserID: id, CreatedAt: when}),
				tx.PutGrant(testSlug, store.Grant{ID: grant, ClientID: "c", UserID: id, CreatedAt: when}),
				tx.PutRefreshToken(testSlug, store.RefreshToken{ID: "rt-" + name, GrantID: grant, CreatedAt: when}),
				tx.PutDelivery(testSlug, store.Delivery{ID: id, Kind: store.JobMail, UserID: id, Status: store.DeliveryPending,
					CreatedAt: when, NextAttemptAt: when}),
			)
		}
		return errors.Join(steps...)
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Make it a file of the release before: without the indexes.
	boltstore.DropBuckets(t, path, testSlug, indexBuckets...)

	s = openStore(t, path, nil)
	mustUpdate(t, s, func(tx store.Tx) error { return tx.DeleteUser(testSlug, 1) })
	mustView(t, s, func(tx store.Tx) error {
		lookups := []struct {
			name string
			err  error
		}{
			{"AuthRequest(ar-ada)", second(tx.AuthRequest(testSlug, "ar-ada"))},
			{"VerificationToken(vt-ada)", second(tx.VerificationToken(testSlug, "vt-ada"))},
			{"RefreshToken(rt-ada)", second(tx.RefreshToken(testSlug, "rt-ada"))},
			{"Delivery(1)", second(tx.Delivery(testSlug, 1))},
		}
		for _, l := range lookups {
			if !errors.Is(l.err, store.ErrNotFound) {
				t.Errorf("%s of the deleted user: %v, want ErrNotFound", l.name, l.err)
			}
		}
		keeps := []error{
			second(tx.AuthRequest(testSlug, "ar-bob")), second(tx.VerificationToken(testSlug, "vt-bob")),
			second(tx.RefreshToken(testSlug, "rt-bob")), second(tx.Delivery(testSlug, 2)),
		}
		if err := errors.Join(keeps...); err != nil {
			t.Errorf("bob's records: %v", err)
		}
		if n, err := tx.PendingDeliveries(); err != nil || n != 1 {
			t.Errorf("PendingDeliveries = %d, %v; want 1", n, err)
		}
		return nil
	})
}

// second returns the error of a two-result call.
func second[T any](_ T, err error) error { return err }

// TestDeleteUserErasesAccess checks at the byte level that DeleteUser
// leaves nothing of the user's memberships, direct roles and holdings,
// where roles and groups have ids of users (the deleted user's among
// them), and that the other users' entries stay.
func TestDeleteUserErasesAccess(t *testing.T) {
	s := newStore(t)
	accessFixture(t, s)
	mustUpdate(t, s, func(tx store.Tx) error { return tx.DeleteUser(testSlug, 2) })
	for _, r := range dumpFile(t, s) {
		if holdsID(r.Data, 2) {
			t.Errorf("after DeleteUser(2), %s holds its id: %q", r.Where, r.Data)
		}
	}
	// Users 1 and 3 keep theirs, and the dump sees them.
	for _, id := range []int64{1, 3} {
		in := map[string]bool{}
		for _, r := range dumpFile(t, s) {
			for _, b := range []string{"group_members", "user_groups", "role_holders"} {
				if strings.Contains(r.Where, `"`+b+`"/`) && holdsID(r.Data, id) {
					in[b] = true
				}
			}
		}
		if len(in) != 3 {
			t.Errorf("user %d is in %v of group_members, user_groups and role_holders; want all", id, in)
		}
	}
}

// TestDeleteWorkspaceErasesAssets checks at the byte level that
// DeleteWorkspace leaves nothing of the workspace's assets (their names,
// media types and bytes) in the file, and that another workspace's assets
// stay, the dump seeing them.
func TestDeleteWorkspaceErasesAssets(t *testing.T) {
	const doomed = "doomed-workspace-5c1e"
	s := newStore(t)
	assets := map[string]store.Asset{
		doomed: {Name: "client/doomed-app/logo", ContentType: "image/x-doomed",
			Data: []byte("doomed logo \x00\xff\x89PNG"), UpdatedAt: testTime},
		testSlug: {Name: "client/kept-app/logo", ContentType: "image/x-kept",
			Data: []byte("kept logo \x00\xff\x89PNG"), UpdatedAt: testTime},
	}
	mustUpdate(t, s, func(tx store.Tx) error {
		return errors.Join(
			tx.PutWorkspace(store.Workspace{Slug: doomed, CreatedAt: testTime}),
			tx.PutAsset(doomed, assets[doomed]),
			tx.PutAsset(doomed, store.Asset{Name: "logo", Data: assets[doomed].Data, UpdatedAt: testTime}),
			tx.PutAsset(testSlug, assets[testSlug]),
		)
	})
	// needles returns what of the asset a dump must hold or not.
	needles := func(a store.Asset) []string { return []string{a.Name, a.ContentType, string(a.Data)} }
	// holding returns the needles that the dump holds.
	holding := func(needles []string) map[string]bool {
		held := map[string]bool{}
		for _, r := range dumpFile(t, s) {
			for _, n := range needles {
				if bytes.Contains(r.Data, []byte(n)) {
					held[n] = true
				}
			}
		}
		return held
	}
	all := func(needles []string) map[string]bool {
		m := map[string]bool{}
		for _, n := range needles {
			m[n] = true
		}
		return m
	}
	if diff := cmp.Diff(all(needles(assets[doomed])), holding(needles(assets[doomed]))); diff != "" {
		t.Fatalf("before DeleteWorkspace, the dump does not see the asset (-want +got):\n%s", diff)
	}

	mustUpdate(t, s, func(tx store.Tx) error { return tx.DeleteWorkspace(doomed) })
	if held := holding(append(needles(assets[doomed]), doomed)); len(held) != 0 {
		t.Errorf("after DeleteWorkspace, the file holds %v", held)
	}
	if diff := cmp.Diff(all(needles(assets[testSlug])), holding(needles(assets[testSlug]))); diff != "" {
		t.Errorf("the other workspace's asset in the dump (-want +got):\n%s", diff)
	}
	mustView(t, s, func(tx store.Tx) error {
		got, err := tx.Asset(testSlug, assets[testSlug].Name)
		if diff := cmp.Diff(assets[testSlug], got); err != nil || diff != "" {
			t.Errorf("Asset of the other workspace = %v (-want +got):\n%s", err, diff)
		}
		return nil
	})
}
