// Package storetest is the conformance suite for implementations of
// store.Store. Every implementation runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s := mystore.Open(...)
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// The suite checks the contract documented in package store, method by
// method, and the transaction guarantees: atomicity on error and panic,
// read-only View transactions, context checks, and serializability under
// concurrent Updates.
//
// Each area (workspaces, users, webhooks, ...) is one subtest of Run with a
// fresh store. Within an area some subtests build on the state the earlier
// ones left, so run an area as a whole rather than one of its subtests.
//
// The suite's transaction functions follow the contract of Store.Update:
// they only assign variables afresh, so an implementation may call them
// more than once.
//
// RunBenchmarks is the benchmark suite every implementation runs, under
// the same names, so that stores compare side by side. The package
// imports store alone: the identity package's rules over a store are
// package identitytest's.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/identitylib/identity/store"
)

// Run runs the conformance suite against the stores newStore returns.
//
// newStore must return a fresh, empty, open store and register with
// t.Cleanup whatever releases it. Run calls it once per area, and some
// areas call it again for subtests that need a store of their own. One
// test closes its store itself, so the cleanup must tolerate a store that
// is already closed (for example by ignoring the error Close returns).
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	areas := []struct {
		name string
		test func(t *testing.T, newStore func(t *testing.T) store.Store)
	}{
		{"Workspaces", testWorkspaces},
		{"Sequences", testSequences},
		{"Users", testUsers},
		{"UserIndexes", testUserIndexes},
		{"UserQueries", testUserQueries},
		{"PrefixCounts", testPrefixCounts},
		{"Roles", testRoles},
		{"Access", testAccess},
		{"Attributes", testAttributes},
		{"AttributeIndex", testAttributeIndex},
		{"ClaimMappers", testClaimMappers},
		{"Webhooks", testWebhooks},
		{"Deliveries", testDeliveries},
		{"DueIndex", testDueIndex},
		{"Sessions", testSessions},
		{"APIKeys", testAPIKeys},
		{"OAuthClients", testOAuthClients},
		{"SigningKeys", testSigningKeys},
		{"AuthRequests", testAuthRequests},
		{"Grants", testGrants},
		{"RefreshTokens", testRefreshTokens},
		{"LoginAttempts", testLoginAttempts},
		{"SecondFactors", testSecondFactors},
		{"Passkeys", testPasskeys},
		{"VerificationTokens", testVerificationTokens},
		{"Assets", testAssets},
		{"Idempotency", testIdempotency},
		{"DeleteUser", testDeleteUser},
		{"DeleteWorkspace", testDeleteWorkspace},
		{"Sweep", testSweep},
		{"Audit", testAudit},
		{"Pages", testPages},
		{"WebhooksForEvent", testWebhooksForEvent},
		{"Transactions", testTransactions},
	}
	for _, a := range areas {
		t.Run(a.name, func(t *testing.T) { a.test(t, newStore) })
	}
}

// Fixtures shared by the areas.

const (
	slugA = "acme"
	slugB = "globex"
	// slugMissing names a workspace no test creates.
	slugMissing = "no-such-workspace"
)

// t0 is the base of every time the suite writes: microsecond precision, UTC,
// as the identity package writes them.
var t0 = time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)

// at returns t0 plus n seconds.
func at(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }

// errBoom is the error the suite's transaction functions fail with.
var errBoom = errors.New("storetest: boom")

// equateEmpty lets an empty slice come back nil.
var equateEmpty = cmpopts.EquateEmpty()

// update runs fn in s.Update and fails the test if Update fails.
func update(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.Update(t.Context(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// view runs fn in s.View and fails the test if View fails.
func view(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.View(t.Context(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// checkErr reports an error unless errors.Is(got, want).
func checkErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Errorf("%s: error = %v, want %v", what, got, want)
	}
}

// workspace returns a workspace record.
func workspace(slug string) store.Workspace {
	return store.Workspace{Slug: slug, CreatedAt: at(0), Settings: []byte(`{"slug":"` + slug + `"}`)}
}

// newStoreWith returns a fresh store holding the workspaces.
func newStoreWith(t *testing.T, newStore func(t *testing.T) store.Store, slugs ...string) store.Store {
	t.Helper()
	s := newStore(t)
	update(t, s, func(tx store.Tx) error {
		for _, slug := range slugs {
			if err := tx.PutWorkspace(workspace(slug)); err != nil {
				return fmt.Errorf("PutWorkspace(%q): %w", slug, err)
			}
		}
		return nil
	})
	return s
}

// user returns a user record with every field set.
func user(id int64, username, email, fullName string) store.User {
	return store.User{
		ID:            id,
		Username:      username,
		Email:         email,
		FullName:      fullName,
		EmailVerified: id%2 == 0,
		Enabled:       true,
		MFAEnabled:    id%3 == 0,
		PasswordHash:  "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$" + strconv.FormatInt(id, 10),
		CreatedAt:     at(int(id % 1000)),
		UpdatedAt:     at(int(id%1000) + 1),
		Version:       id*1_000_003 + 7, // any value, kept as given
	}
}

// putUsers writes the users into the workspace in one transaction.
func putUsers(t *testing.T, s store.Store, slug string, users ...store.User) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		for _, u := range users {
			if err := tx.PutUser(slug, u); err != nil {
				return fmt.Errorf("PutUser(%q, %d): %w", slug, u.ID, err)
			}
		}
		return nil
	})
}

// snapshot is everything a store holds for one workspace, as read back
// through the Tx interface, and the due index of every workspace.
type snapshot struct {
	Workspaces []store.Workspace
	Users      []store.User
	UserTotal  int
	ByUsername map[string]int64
	ByEmail    map[string]int64
	Roles      map[int64][]int64
	Attributes map[int64]map[string]string
	Mappers    []store.ClaimMapper
	Webhooks   []store.Webhook
	HookTotal  int
	Deliveries map[int64][]store.Delivery
	MailJobs   []store.Delivery
	// DeliveryByID holds what Delivery returns for the ids in
	// snapshotIDs that it finds.
	DeliveryByID map[int64]store.Delivery
	Due          dueState
	// Sessions holds UserSessions of the ids in snapshotIDs, and
	// SessionByID what Session returns for the ids in snapshotSessions
	// that it finds.
	Sessions    map[int64][]store.Session
	SessionByID map[string]store.Session
	APIKeys     []store.APIKey
	Clients     []store.OAuthClient
	// ClientByID holds what OAuthClient returns for the ids in
	// snapshotClients that it finds.
	ClientByID map[string]store.OAuthClient
}

// The delivery and user ids, and session ids, whose records a snapshot
// reads whether or not a listing names them.
var (
	snapshotIDs      = []int64{1, 2, 3, 4}
	snapshotSessions = []string{"sess-1", "sess-2", "sess-3"}
	snapshotClients  = []string{"client-1", "client-2", "client-3"}
)

// takeSnapshot reads the workspace's state. lookups are extra usernames
// and emails whose index entries are recorded too (ErrNotFound as -1).
func takeSnapshot(t *testing.T, s store.Store, slug string, lookups ...string) snapshot {
	t.Helper()
	var snap snapshot
	view(t, s, func(tx store.Tx) error {
		snap = snapshot{
			ByUsername: map[string]int64{},
			ByEmail:    map[string]int64{},
			Roles:      map[int64][]int64{},
			Attributes: map[int64]map[string]string{},
			Deliveries: map[int64][]store.Delivery{},
		}
		var err error
		if snap.Workspaces, err = tx.Workspaces(); err != nil {
			return fmt.Errorf("Workspaces: %w", err)
		}
		if snap.Users, snap.UserTotal, err = tx.Users(slug, store.UserQuery{Limit: 1 << 30}); err != nil {
			return fmt.Errorf("Users: %w", err)
		}
		names := append([]string(nil), lookups...)
		for _, u := range snap.Users {
			names = append(names, u.Username, u.Email)
		}
		for _, name := range names {
			snap.ByUsername[name] = lookup(tx.UserIDByUsername(slug, name))
			snap.ByEmail[name] = lookup(tx.UserIDByEmail(slug, name))
		}
		for _, u := range snap.Users {
			if snap.Roles[u.ID], err = tx.UserRoles(slug, u.ID); err != nil {
				return fmt.Errorf("UserRoles: %w", err)
			}
			if snap.Attributes[u.ID], err = tx.UserAttributes(slug, u.ID); err != nil {
				return fmt.Errorf("UserAttributes: %w", err)
			}
		}
		if snap.Mappers, err = tx.ClaimMappers(slug); err != nil {
			return fmt.Errorf("ClaimMappers: %w", err)
		}
		if snap.Webhooks, snap.HookTotal, err = tx.Webhooks(slug, 0, 1<<30); err != nil {
			return fmt.Errorf("Webhooks: %w", err)
		}
		for _, w := range snap.Webhooks {
			if snap.Deliveries[w.ID], err = tx.Deliveries(slug, w.ID); err != nil {
				return fmt.Errorf("Deliveries: %w", err)
			}
		}
		if snap.MailJobs, err = tx.MailJobs(slug); err != nil {
			return fmt.Errorf("MailJobs: %w", err)
		}
		if err := snap.readByID(tx, slug); err != nil {
			return err
		}
		if snap.Due, err = readDueState(tx); err != nil {
			return err
		}
		if snap.APIKeys, err = tx.APIKeys(slug); err != nil {
			return fmt.Errorf("APIKeys: %w", err)
		}
		if snap.Clients, err = tx.OAuthClients(slug); err != nil {
			return fmt.Errorf("OAuthClients: %w", err)
		}
		return nil
	})
	return snap
}

// readByID reads into snap the deliveries, user sessions, sessions and
// OAuth clients whose ids the snapshot always reads.
func (snap *snapshot) readByID(tx store.Tx, slug string) error {
	snap.DeliveryByID = map[int64]store.Delivery{}
	snap.Sessions = map[int64][]store.Session{}
	snap.SessionByID = map[string]store.Session{}
	for _, id := range snapshotIDs {
		d, err := tx.Delivery(slug, id)
		switch {
		case err == nil:
			snap.DeliveryByID[id] = d
		case !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("Delivery: %w", err)
		}
		if snap.Sessions[id], err = tx.UserSessions(slug, id); err != nil {
			return fmt.Errorf("UserSessions: %w", err)
		}
	}
	for _, id := range snapshotSessions {
		sess, err := tx.Session(slug, id)
		switch {
		case err == nil:
			snap.SessionByID[id] = sess
		case !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("Session: %w", err)
		}
	}
	snap.ClientByID = map[string]store.OAuthClient{}
	for _, id := range snapshotClients {
		c, err := tx.OAuthClient(slug, id)
		switch {
		case err == nil:
			snap.ClientByID[id] = c
		case !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("OAuthClient: %w", err)
		}
	}
	return nil
}

// lookup turns an index lookup into an id, or -1 for ErrNotFound, or -2
// for any other error.
func lookup(id int64, err error) int64 {
	switch {
	case err == nil:
		return id
	case errors.Is(err, store.ErrNotFound):
		return -1
	default:
		return -2
	}
}

// testTransactions checks the guarantees of View and Update.
func testTransactions(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("CommitIsVisible", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		u := user(1, "alice", "alice@example.com", "Alice Liddell")
		putUsers(t, s, slugA, u)
		var got store.User
		view(t, s, func(tx store.Tx) error {
			var err error
			got, err = tx.User(slugA, 1)
			return err
		})
		if diff := cmp.Diff(u, got); diff != "" {
			t.Errorf("User mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("UpdateSeesOwnWrites", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		u := user(1, "alice", "alice@example.com", "Alice Liddell")
		var (
			got      store.User
			id       int64
			attrs    map[string]string
			hooks    []store.Webhook
			hookTot  int
			wsGot    store.Workspace
			usersGot []store.User
			delivGot store.Delivery
			dueGot   dueState
			sessGot  []store.Session
			cliGot   store.OAuthClient
			clisGot  []store.OAuthClient
		)
		update(t, s, func(tx store.Tx) error {
			if err := tx.PutWorkspace(workspace(slugB)); err != nil {
				return err
			}
			var err error
			if wsGot, err = tx.Workspace(slugB); err != nil {
				return fmt.Errorf("Workspace: %w", err)
			}
			if err := tx.PutUser(slugB, u); err != nil {
				return err
			}
			if got, err = tx.User(slugB, 1); err != nil {
				return fmt.Errorf("User: %w", err)
			}
			if id, err = tx.UserIDByEmail(slugB, "ALICE@example.com"); err != nil {
				return fmt.Errorf("UserIDByEmail: %w", err)
			}
			if usersGot, _, err = tx.Users(slugB, store.UserQuery{Prefix: "ali", Limit: 10}); err != nil {
				return fmt.Errorf("Users: %w", err)
			}
			if err := tx.PutUserAttribute(slugB, 1, "k", "v"); err != nil {
				return err
			}
			if attrs, err = tx.UserAttributes(slugB, 1); err != nil {
				return fmt.Errorf("UserAttributes: %w", err)
			}
			if err := tx.PutWebhook(slugB, store.Webhook{ID: 4, URL: "https://h.example/"}); err != nil {
				return err
			}
			if hooks, hookTot, err = tx.Webhooks(slugB, 0, 10); err != nil {
				return fmt.Errorf("Webhooks: %w", err)
			}
			if err := tx.PutDelivery(slugB, delivery(6, 4)); err != nil {
				return err
			}
			if delivGot, err = tx.Delivery(slugB, 6); err != nil {
				return fmt.Errorf("Delivery: %w", err)
			}
			if dueGot, err = readDueState(tx); err != nil {
				return err
			}
			if err := tx.PutSession(slugB, storedSession("sess-1", 1, 10)); err != nil {
				return err
			}
			if sessGot, err = tx.UserSessions(slugB, 1); err != nil {
				return fmt.Errorf("UserSessions: %w", err)
			}
			if err := tx.PutOAuthClient(slugB, oauthClient("client-1", 1)); err != nil {
				return err
			}
			if cliGot, err = tx.OAuthClient(slugB, "client-1"); err != nil {
				return fmt.Errorf("OAuthClient: %w", err)
			}
			if clisGot, err = tx.OAuthClients(slugB); err != nil {
				return fmt.Errorf("OAuthClients: %w", err)
			}
			return nil
		})
		if diff := cmp.Diff(workspace(slugB), wsGot, equateEmpty); diff != "" {
			t.Errorf("Workspace mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(u, got); diff != "" {
			t.Errorf("User mismatch (-want +got):\n%s", diff)
		}
		if id != 1 {
			t.Errorf("UserIDByEmail = %d, want 1", id)
		}
		if diff := cmp.Diff([]store.User{u}, usersGot); diff != "" {
			t.Errorf("Users mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{"k": "v"}, attrs); diff != "" {
			t.Errorf("UserAttributes mismatch (-want +got):\n%s", diff)
		}
		if len(hooks) != 1 || hooks[0].ID != 4 || hookTot != 1 {
			t.Errorf("Webhooks = %v, %d; want the one endpoint 4, total 1", hooks, hookTot)
		}
		if diff := cmp.Diff(delivery(6, 4), delivGot); diff != "" {
			t.Errorf("Delivery mismatch (-want +got):\n%s", diff)
		}
		wantDue := dueState{
			Due:  []store.QueuedDelivery{inWorkspace(slugB, delivery(6, 4))},
			Next: delivery(6, 4).DueAt(), HasNext: true, Pending: 1,
		}
		if diff := cmp.Diff(wantDue, dueGot); diff != "" {
			t.Errorf("due index mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]store.Session{storedSession("sess-1", 1, 10)}, sessGot); diff != "" {
			t.Errorf("UserSessions mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(oauthClient("client-1", 1), cliGot); diff != "" {
			t.Errorf("OAuthClient mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]store.OAuthClient{oauthClient("client-1", 1)}, clisGot); diff != "" {
			t.Errorf("OAuthClients mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("FnErrorReturnedUnchanged", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		if err := s.Update(t.Context(), func(tx store.Tx) error { return errBoom }); err != errBoom {
			t.Errorf("Update error = %v, want errBoom itself", err)
		}
		if err := s.View(t.Context(), func(tx store.Tx) error { return errBoom }); !errors.Is(err, errBoom) {
			t.Errorf("View error = %v, want errBoom", err)
		}
		err := s.Update(t.Context(), func(tx store.Tx) error {
			_, err := tx.User(slugA, 99)
			return err
		})
		checkErr(t, "Update returning User's error", err, store.ErrNotFound)
	})

	t.Run("ErrorInFreshWorkspaceLeavesNothing", func(t *testing.T) {
		s := newStore(t)
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.PutWorkspace(workspace(slugA)); err != nil {
				return err
			}
			if err := writeEverything(tx, slugA); err != nil {
				return err
			}
			return errBoom
		})
		if err != errBoom {
			t.Fatalf("Update error = %v, want errBoom", err)
		}
		view(t, s, func(tx store.Tx) error {
			ws, err := tx.Workspaces()
			if err != nil || len(ws) != 0 {
				t.Errorf("Workspaces = %v, %v; want none", ws, err)
			}
			_, err = tx.Workspace(slugA)
			checkErr(t, "Workspace", err, store.ErrNotFound)
			_, err = tx.APIKey("key-1")
			checkErr(t, "APIKey", err, store.ErrNotFound)
			checkNoDueWork(t, tx)
			return nil
		})
	})

	t.Run("ErrorLeavesNothing", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := writeEverything(tx, slugA); err != nil {
				return err
			}
			return errBoom
		})
		if err != errBoom {
			t.Fatalf("Update error = %v, want errBoom", err)
		}
		checkEmptyWorkspace(t, s, slugA)
	})

	t.Run("PanicLeavesNothing", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		type sentinel struct{ msg string }
		got := func() (r any) {
			defer func() { r = recover() }()
			_ = s.Update(t.Context(), func(tx store.Tx) error {
				if err := writeEverything(tx, slugA); err != nil {
					return err
				}
				panic(sentinel{"boom"})
			})
			return nil
		}()
		if got != (sentinel{"boom"}) {
			t.Fatalf("recovered %#v, want the panic value sentinel{boom}", got)
		}
		checkEmptyWorkspace(t, s, slugA)
		// The store still works after the panic.
		putUsers(t, s, slugA, user(1, "alice", "alice@example.com", "Alice"))
	})

	t.Run("ErrorKeepsEarlierData", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		update(t, s, func(tx store.Tx) error { return writeEverything(tx, slugA) })
		var first int64
		update(t, s, func(tx store.Tx) error {
			var err error
			first, err = tx.NextID(slugA, store.SeqUsers)
			return err
		})
		before := takeSnapshot(t, s, slugA, "alice2", "alice2@example.com", "bob", "bob@example.com")
		if before.UserTotal != 2 || len(before.Webhooks) != 2 || len(before.APIKeys) != 2 || len(before.Clients) != 2 {
			t.Fatalf("baseline not written: %+v", before)
		}

		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := changeEverything(tx, slugA); err != nil {
				return err
			}
			return errBoom
		})
		if err != errBoom {
			t.Fatalf("Update error = %v, want errBoom", err)
		}
		after := takeSnapshot(t, s, slugA, "alice2", "alice2@example.com", "bob", "bob@example.com")
		if diff := cmp.Diff(before, after, equateEmpty); diff != "" {
			t.Errorf("state changed by a failed Update (-before +after):\n%s", diff)
		}
		view(t, s, func(tx store.Tx) error {
			users, total, err := tx.Users(slugA, store.UserQuery{Prefix: "Renamed", Limit: 10})
			if err != nil || total != 0 || len(users) != 0 {
				t.Errorf("Users(prefix of the rolled-back name) = %v, %d, %v; want none", users, total, err)
			}
			users, total, err = tx.Users(slugA, store.UserQuery{Prefix: "Alice", Limit: 10})
			if err != nil || total != 1 || len(users) != 1 || users[0].ID != 1 {
				t.Errorf("Users(prefix of the kept name) = %v, %d, %v; want user 1", users, total, err)
			}
			_, err = tx.APIKey("key-9")
			checkErr(t, "APIKey(rolled-back key)", err, store.ErrNotFound)
			ws, err := tx.Workspace(slugA)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(workspace(slugA), ws, equateEmpty); diff != "" {
				t.Errorf("Workspace mismatch (-want +got):\n%s", diff)
			}
			return nil
		})
		// Committed sequence values are never handed out again.
		var next int64
		update(t, s, func(tx store.Tx) error {
			var err error
			next, err = tx.NextID(slugA, store.SeqUsers)
			return err
		})
		if next <= first {
			t.Errorf("NextID after a rolled-back Update = %d, want > %d", next, first)
		}
		// Committing the same changes works and is visible.
		update(t, s, func(tx store.Tx) error { return changeEverything(tx, slugA) })
		changed := takeSnapshot(t, s, slugA)
		if changed.UserTotal != 2 || changed.Users[0].FullName != "Renamed Person" || len(changed.APIKeys) != 2 || changed.APIKeys[1].ID != "key-9" ||
			len(changed.Clients) != 2 || changed.Clients[0].Name != "renamed" || changed.Clients[1].ID != "client-3" {
			t.Errorf("committed changes not visible: %+v", changed)
		}
	})

	t.Run("ViewIsReadOnly", func(t *testing.T) {
		testViewIsReadOnly(t, newStore)
	})

	t.Run("UsedAfterReturn", func(t *testing.T) {
		testUsedAfterReturn(t, newStore)
	})

	t.Run("CancelledContext", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		cancelled, cancel := context.WithCancel(t.Context())
		cancel()
		expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
		defer cancel2()
		for _, tc := range []struct {
			name string
			ctx  context.Context
			want error
		}{
			{"Canceled", cancelled, context.Canceled},
			{"DeadlineExceeded", expired, context.DeadlineExceeded},
		} {
			t.Run(tc.name, func(t *testing.T) {
				called := false
				err := s.Update(tc.ctx, func(tx store.Tx) error {
					called = true
					return tx.PutUser(slugA, user(1, "alice", "alice@example.com", "Alice"))
				})
				checkErr(t, "Update", err, tc.want)
				if called {
					t.Errorf("Update called fn with a done context")
				}
				called = false
				err = s.View(tc.ctx, func(tx store.Tx) error {
					called = true
					return nil
				})
				checkErr(t, "View", err, tc.want)
				if called {
					t.Errorf("View called fn with a done context")
				}
			})
		}
		view(t, s, func(tx store.Tx) error {
			_, err := tx.User(slugA, 1)
			checkErr(t, "User after cancelled Update", err, store.ErrNotFound)
			return nil
		})
	})

	t.Run("Closed", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		called := false
		err := s.Update(t.Context(), func(tx store.Tx) error { called = true; return nil })
		checkErr(t, "Update after Close", err, store.ErrClosed)
		err = s.View(t.Context(), func(tx store.Tx) error { called = true; return nil })
		checkErr(t, "View after Close", err, store.ErrClosed)
		if called {
			t.Errorf("fn called on a closed store")
		}
	})

	t.Run("ConcurrentReadModifyWrite", func(t *testing.T) {
		testConcurrentCounter(t, newStore)
	})
}

// writeEverything writes one of every record into the existing workspace
// slug: users 1 and 2, roles, attributes, mappers, webhooks 1 and 2 with
// deliveries 1 and 2 (pending) and 3 (succeeded), mail job 4 (pending), sessions sess-1 and
// sess-2 of user 1, API keys key-1 and key-2, OAuth clients client-1 and
// client-2, and a sequence value.
func writeEverything(tx store.Tx, slug string) error {
	steps := []func() error{
		func() error { return tx.PutUser(slug, user(1, "alice", "alice@example.com", "Alice Liddell")) },
		func() error { return tx.PutUser(slug, user(2, "bob", "bob@example.com", "Bob Builder")) },
		func() error { return tx.AddUserRole(slug, 1, 10) },
		func() error { return tx.AddUserRole(slug, 1, 11) },
		func() error { return tx.PutUserAttribute(slug, 1, "dept", "R&D") },
		func() error { return tx.PutUserAttribute(slug, 1, "floor", "3") },
		func() error { return tx.PutUserAttribute(slug, 2, "dept", "Ops") },
		func() error {
			return tx.PutClaimMapper(slug, store.ClaimMapper{AttributeKey: "dept", ClaimName: "department", IncludeInID: true})
		},
		func() error {
			return tx.PutClaimMapper(slug, store.ClaimMapper{AttributeKey: "floor", ClaimName: "floor", IncludeInAccess: true})
		},
		func() error { return tx.PutWebhook(slug, webhook(1)) },
		func() error { return tx.PutWebhook(slug, webhook(2)) },
		func() error { return tx.PutDelivery(slug, delivery(1, 1)) },
		func() error { return tx.PutDelivery(slug, delivery(2, 2)) },
		func() error { return tx.PutDelivery(slug, withStatus(delivery(3, 2), store.DeliverySucceeded)) },
		func() error { return tx.PutDelivery(slug, asMail(delivery(4, 0))) },
		func() error { return tx.PutSession(slug, storedSession("sess-1", 1, 10)) },
		func() error { return tx.PutSession(slug, storedSession("sess-2", 1, 20)) },
		func() error { return tx.PutAPIKey(apiKey("key-1", slug)) },
		func() error { return tx.PutAPIKey(apiKey("key-2", slug)) },
		func() error { return tx.PutOAuthClient(slug, oauthClient("client-1", 1)) },
		func() error { return tx.PutOAuthClient(slug, publicClient("client-2", 2)) },
		func() error { _, err := tx.NextID(slug, store.SeqWebhooks); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("writeEverything step %d: %w", i, err)
		}
	}
	return nil
}

// changeEverything changes and deletes what writeEverything wrote.
func changeEverything(tx store.Tx, slug string) error {
	steps := []func() error{
		func() error {
			ws := workspace(slug)
			ws.Settings = []byte("changed")
			return tx.PutWorkspace(ws)
		},
		func() error { return tx.PutUser(slug, user(1, "alice2", "alice2@example.com", "Renamed Person")) },
		func() error { return tx.PutUser(slug, user(3, "bob", "carol@example.com", "Carol")) }, // conflicts
		func() error { return tx.AddUserRole(slug, 1, 12) },
		func() error { return tx.RemoveUserRole(slug, 1, 10) },
		func() error { return tx.PutUserAttribute(slug, 1, "dept", "Sales") },
		func() error { return tx.DeleteUserAttribute(slug, 1, "floor") },
		func() error { return tx.PutUserAttribute(slug, 2, "new", "x") },
		func() error {
			return tx.PutClaimMapper(slug, store.ClaimMapper{AttributeKey: "dept", ClaimName: "dep", IncludeInAccess: true})
		},
		func() error { return tx.DeleteClaimMapper(slug, "floor") },
		func() error {
			return tx.PutClaimMapper(slug, store.ClaimMapper{AttributeKey: "zone", ClaimName: "zone"})
		},
		func() error { return tx.DeleteWebhook(slug, 1) },
		func() error {
			w := webhook(2)
			w.URL = "https://changed.example/"
			return tx.PutWebhook(slug, w)
		},
		func() error { return tx.PutWebhook(slug, webhook(3)) },
		func() error {
			d := delivery(2, 2)
			d.Attempts = 5
			return tx.PutDelivery(slug, d)
		},
		func() error { return tx.PutDelivery(slug, withStatus(delivery(2, 2), store.DeliveryFailed)) },
		func() error { return tx.PutDelivery(slug, delivery(3, 3)) }, // succeeded to pending, moved
		func() error { return tx.PutDelivery(slug, withStatus(asMail(delivery(4, 0)), store.DeliveryFailed)) },
		func() error { return tx.PutDelivery(slug, asMail(delivery(5, 0))) },
		func() error { return tx.PutSession(slug, revoked(storedSession("sess-1", 2, 5), 50)) },
		func() error { return tx.PutSession(slug, storedSession("sess-3", 1, 1)) },
		func() error {
			k := apiKey("key-1", slug)
			k.Name = "renamed"
			return tx.PutAPIKey(k)
		},
		func() error { return tx.DeleteAPIKey("key-2") },
		func() error { return tx.PutAPIKey(apiKey("key-9", slug)) },
		func() error {
			c := oauthClient("client-1", 1)
			c.Name = "renamed"
			return tx.PutOAuthClient(slug, c)
		},
		func() error { return tx.DeleteOAuthClient(slug, "client-2") },
		func() error { return tx.PutOAuthClient(slug, oauthClient("client-3", 3)) },
		func() error { _, err := tx.NextID(slug, store.SeqUsers); return err },
	}
	for i, step := range steps {
		err := step()
		if i == 2 {
			// Renaming user 1 freed nothing that user 3 could take: "bob"
			// still belongs to user 2.
			if !errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("changeEverything step %d: error = %v, want ErrConflict", i, err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("changeEverything step %d: %w", i, err)
		}
	}
	return nil
}

// checkNoDueWork checks that the due index of the store is empty.
func checkNoDueWork(t *testing.T, tx store.Tx) {
	t.Helper()
	st, err := readDueState(tx)
	if err != nil || len(st.Due) != 0 || st.HasNext || st.Pending != 0 {
		t.Errorf("due index = %+v, %v; want it empty", st, err)
	}
}

// checkEmptyWorkspace checks that the workspace holds nothing that
// writeEverything writes, and that no delivery of any workspace is due.
func checkEmptyWorkspace(t *testing.T, s store.Store, slug string) {
	t.Helper()
	view(t, s, func(tx store.Tx) error {
		for _, id := range []int64{1, 2} {
			_, err := tx.User(slug, id)
			checkErr(t, fmt.Sprintf("User(%d)", id), err, store.ErrNotFound)
			roles, err := tx.UserRoles(slug, id)
			if err != nil || len(roles) != 0 {
				t.Errorf("UserRoles(%d) = %v, %v; want none", id, roles, err)
			}
			attrs, err := tx.UserAttributes(slug, id)
			if err != nil || len(attrs) != 0 {
				t.Errorf("UserAttributes(%d) = %v, %v; want none", id, attrs, err)
			}
			_, err = tx.Webhook(slug, id)
			checkErr(t, fmt.Sprintf("Webhook(%d)", id), err, store.ErrNotFound)
			if ds, err := tx.Deliveries(slug, id); len(ds) != 0 || (err != nil && !errors.Is(err, store.ErrNotFound)) {
				t.Errorf("Deliveries(%d) = %v, %v; want none", id, ds, err)
			}
			_, err = tx.Delivery(slug, id)
			checkErr(t, fmt.Sprintf("Delivery(%d)", id), err, store.ErrNotFound)
			if ss, err := tx.UserSessions(slug, id); err != nil || len(ss) != 0 {
				t.Errorf("UserSessions(%d) = %v, %v; want none", id, ss, err)
			}
		}
		for _, id := range snapshotSessions {
			_, err := tx.Session(slug, id)
			checkErr(t, "Session("+id+")", err, store.ErrNotFound)
		}
		if ds, err := tx.MailJobs(slug); err != nil || len(ds) != 0 {
			t.Errorf("MailJobs = %v, %v; want none", ds, err)
		}
		checkNoDueWork(t, tx)
		for _, name := range []string{"alice", "bob"} {
			_, err := tx.UserIDByUsername(slug, name)
			checkErr(t, "UserIDByUsername("+name+")", err, store.ErrNotFound)
			_, err = tx.UserIDByEmail(slug, name+"@example.com")
			checkErr(t, "UserIDByEmail("+name+")", err, store.ErrNotFound)
		}
		users, total, err := tx.Users(slug, store.UserQuery{Limit: 10})
		if err != nil || total != 0 || len(users) != 0 {
			t.Errorf("Users = %v, %d, %v; want none", users, total, err)
		}
		mappers, err := tx.ClaimMappers(slug)
		if err != nil || len(mappers) != 0 {
			t.Errorf("ClaimMappers = %v, %v; want none", mappers, err)
		}
		hooks, total, err := tx.Webhooks(slug, 0, 10)
		if err != nil || total != 0 || len(hooks) != 0 {
			t.Errorf("Webhooks = %v, %d, %v; want none", hooks, total, err)
		}
		for _, id := range []string{"key-1", "key-2"} {
			_, err := tx.APIKey(id)
			checkErr(t, "APIKey("+id+")", err, store.ErrNotFound)
		}
		keys, err := tx.APIKeys(slug)
		if err != nil || len(keys) != 0 {
			t.Errorf("APIKeys = %v, %v; want none", keys, err)
		}
		for _, id := range snapshotClients {
			_, err := tx.OAuthClient(slug, id)
			checkErr(t, "OAuthClient("+id+")", err, store.ErrNotFound)
		}
		if cs, err := tx.OAuthClients(slug); err != nil || len(cs) != 0 {
			t.Errorf("OAuthClients = %v, %v; want none", cs, err)
		}
		return nil
	})
}

// testViewIsReadOnly checks that every write inside View returns
// ErrReadOnly and changes nothing.
func testViewIsReadOnly(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA)
	update(t, s, func(tx store.Tx) error { return writeEverything(tx, slugA) })
	before := takeSnapshot(t, s, slugA, "carol", "carol@example.com")

	writes := []struct {
		name string
		fn   func(tx store.Tx) error
	}{
		{"PutWorkspace(new)", func(tx store.Tx) error { return tx.PutWorkspace(workspace(slugB)) }},
		{"PutWorkspace(existing)", func(tx store.Tx) error {
			ws := workspace(slugA)
			ws.Settings = []byte("changed")
			return tx.PutWorkspace(ws)
		}},
		{"NextID", func(tx store.Tx) error { _, err := tx.NextID(slugA, store.SeqUsers); return err }},
		{"PutUser(new)", func(tx store.Tx) error {
			return tx.PutUser(slugA, user(3, "carol", "carol@example.com", "Carol"))
		}},
		{"PutUser(existing)", func(tx store.Tx) error {
			return tx.PutUser(slugA, user(1, "alice", "alice@example.com", "Changed"))
		}},
		{"AddUserRole", func(tx store.Tx) error { return tx.AddUserRole(slugA, 1, 99) }},
		{"RemoveUserRole", func(tx store.Tx) error { return tx.RemoveUserRole(slugA, 1, 10) }},
		{"PutUserAttribute", func(tx store.Tx) error { return tx.PutUserAttribute(slugA, 1, "dept", "x") }},
		{"DeleteUserAttribute", func(tx store.Tx) error { return tx.DeleteUserAttribute(slugA, 1, "dept") }},
		{"PutClaimMapper", func(tx store.Tx) error {
			return tx.PutClaimMapper(slugA, store.ClaimMapper{AttributeKey: "x", ClaimName: "x"})
		}},
		{"DeleteClaimMapper", func(tx store.Tx) error { return tx.DeleteClaimMapper(slugA, "dept") }},
		{"PutWebhook", func(tx store.Tx) error { return tx.PutWebhook(slugA, webhook(7)) }},
		{"DeleteWebhook", func(tx store.Tx) error { return tx.DeleteWebhook(slugA, 1) }},
		{"PutDelivery", func(tx store.Tx) error { return tx.PutDelivery(slugA, delivery(7, 1)) }},
		{"PutDelivery(mail)", func(tx store.Tx) error { return tx.PutDelivery(slugA, asMail(delivery(8, 0))) }},
		{"PutDelivery(transition)", func(tx store.Tx) error {
			return tx.PutDelivery(slugA, withStatus(delivery(1, 1), store.DeliverySucceeded))
		}},
		{"ClaimDelivery", func(tx store.Tx) error { _, _, err := tx.ClaimDelivery(slugA, 1); return err }},
		{"PutSession(new)", func(tx store.Tx) error { return tx.PutSession(slugA, storedSession("sess-3", 1, 1)) }},
		{"PutSession(existing)", func(tx store.Tx) error {
			return tx.PutSession(slugA, revoked(storedSession("sess-1", 2, 10), 20))
		}},
		{"PutAPIKey", func(tx store.Tx) error { return tx.PutAPIKey(apiKey("key-7", slugA)) }},
		{"DeleteAPIKey", func(tx store.Tx) error { return tx.DeleteAPIKey("key-1") }},
		{"PutOAuthClient(new)", func(tx store.Tx) error { return tx.PutOAuthClient(slugA, oauthClient("client-3", 3)) }},
		{"PutOAuthClient(existing)", func(tx store.Tx) error { return tx.PutOAuthClient(slugA, publicClient("client-1", 9)) }},
		{"DeleteOAuthClient", func(tx store.Tx) error { return tx.DeleteOAuthClient(slugA, "client-1") }},
	}
	for _, w := range writes {
		err := s.View(t.Context(), func(tx store.Tx) error {
			err := w.fn(tx)
			checkErr(t, w.name+" in View", err, store.ErrReadOnly)
			return nil
		})
		if err != nil {
			t.Errorf("View around %s: %v", w.name, err)
		}
	}
	after := takeSnapshot(t, s, slugA, "carol", "carol@example.com")
	if diff := cmp.Diff(before, after, equateEmpty); diff != "" {
		t.Errorf("writes in View changed the store (-before +after):\n%s", diff)
	}
	// The refused NextID consumed nothing: the users sequence was never used.
	var id int64
	update(t, s, func(tx store.Tx) error {
		var err error
		id, err = tx.NextID(slugA, store.SeqUsers)
		return err
	})
	if id != 1 {
		t.Errorf("first committed NextID after a refused one = %d, want 1", id)
	}
}

// testUsedAfterReturn checks that a Tx kept past the function of its View
// or Update returns ErrTxDone from every method it is tried with, and
// that the writes refused so change nothing.
func testUsedAfterReturn(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA)
	update(t, s, func(tx store.Tx) error { return writeEverything(tx, slugA) })
	before := takeSnapshot(t, s, slugA, "carol", "carol@example.com")

	calls := []struct {
		name string
		fn   func(tx store.Tx) error
	}{
		{"Workspace", func(tx store.Tx) error { _, err := tx.Workspace(slugA); return err }},
		{"User", func(tx store.Tx) error { _, err := tx.User(slugA, 1); return err }},
		{"Users", func(tx store.Tx) error { _, _, err := tx.Users(slugA, store.UserQuery{Limit: 10}); return err }},
		{"Delivery", func(tx store.Tx) error { _, err := tx.Delivery(slugA, 1); return err }},
		{"MailJobs", func(tx store.Tx) error { _, err := tx.MailJobs(slugA); return err }},
		{"DueDeliveries", func(tx store.Tx) error { _, err := tx.DueDeliveries(forever, 10); return err }},
		{"APIKey", func(tx store.Tx) error { _, err := tx.APIKey("key-1"); return err }},
		{"NextID", func(tx store.Tx) error { _, err := tx.NextID(slugA, store.SeqUsers); return err }},
		{"PutUser", func(tx store.Tx) error {
			return tx.PutUser(slugA, user(3, "carol", "carol@example.com", "Carol"))
		}},
		{"PutDelivery", func(tx store.Tx) error { return tx.PutDelivery(slugA, delivery(7, 1)) }},
		{"ClaimDelivery", func(tx store.Tx) error { _, _, err := tx.ClaimDelivery(slugA, 1); return err }},
		{"DeleteWebhook", func(tx store.Tx) error { return tx.DeleteWebhook(slugA, 1) }},
		{"DeleteAPIKey", func(tx store.Tx) error { return tx.DeleteAPIKey("key-1") }},
		{"OAuthClient", func(tx store.Tx) error { _, err := tx.OAuthClient(slugA, "client-1"); return err }},
		{"OAuthClients", func(tx store.Tx) error { _, err := tx.OAuthClients(slugA); return err }},
		{"PutOAuthClient", func(tx store.Tx) error { return tx.PutOAuthClient(slugA, oauthClient("client-3", 3)) }},
		{"DeleteOAuthClient", func(tx store.Tx) error { return tx.DeleteOAuthClient(slugA, "client-1") }},
	}
	var fromView, fromUpdate store.Tx
	view(t, s, func(tx store.Tx) error { fromView = tx; return nil })
	update(t, s, func(tx store.Tx) error { fromUpdate = tx; return nil })
	for _, c := range calls {
		checkErr(t, c.name+" after View returned", c.fn(fromView), store.ErrTxDone)
		checkErr(t, c.name+" after Update returned", c.fn(fromUpdate), store.ErrTxDone)
	}
	// Used from a later transaction, while that one runs.
	update(t, s, func(tx store.Tx) error {
		for _, c := range calls {
			checkErr(t, c.name+" of an ended Update inside another", c.fn(fromUpdate), store.ErrTxDone)
		}
		return nil
	})
	after := takeSnapshot(t, s, slugA, "carol", "carol@example.com")
	if diff := cmp.Diff(before, after, equateEmpty); diff != "" {
		t.Errorf("calls on ended transactions changed the store (-before +after):\n%s", diff)
	}
}

// testConcurrentCounter runs concurrent read-modify-write Updates on a
// counter and concurrent Views that check they see a consistent snapshot.
func testConcurrentCounter(t *testing.T, newStore func(t *testing.T) store.Store) {
	const writers = 50
	s := newStoreWith(t, newStore, slugA)
	putUsers(t, s, slugA, user(1, "alice", "alice@example.com", "Alice"))

	// Readers start first so that they overlap with the writers.
	const readers, minReads = 4, 50
	stop := make(chan struct{})
	var readersDone sync.WaitGroup
	readErrs := make(chan error, readers)
	for range readers {
		readersDone.Go(func() {
			// At least minReads Views, then on until the writers are done.
			for i := 0; ; i++ {
				if i >= minReads {
					select {
					case <-stop:
						readErrs <- nil
						return
					default:
					}
				}
				var a, b string
				err := s.View(context.Background(), func(tx store.Tx) error {
					attrs, err := tx.UserAttributes(slugA, 1)
					a, b = attrs["counter"], attrs["mirror"]
					return err
				})
				if err == nil && a != b {
					err = fmt.Errorf("View saw counter %q but mirror %q", a, b)
				}
				if err != nil {
					readErrs <- err
					return
				}
			}
		})
	}

	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			errs <- s.Update(context.Background(), func(tx store.Tx) error {
				attrs, err := tx.UserAttributes(slugA, 1)
				if err != nil {
					return err
				}
				n := 0
				if v, ok := attrs["counter"]; ok {
					if n, err = strconv.Atoi(v); err != nil {
						return err
					}
				}
				v := strconv.Itoa(n + 1)
				if err := tx.PutUserAttribute(slugA, 1, "counter", v); err != nil {
					return err
				}
				// A reader that sees counter must see the same mirror.
				return tx.PutUserAttribute(slugA, 1, "mirror", v)
			})
		})
	}

	wg.Wait()
	close(stop)
	readersDone.Wait()
	close(errs)
	close(readErrs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Update: %v", err)
		}
	}
	for err := range readErrs {
		if err != nil {
			t.Errorf("concurrent View: %v", err)
		}
	}
	var got map[string]string
	view(t, s, func(tx store.Tx) error {
		var err error
		got, err = tx.UserAttributes(slugA, 1)
		return err
	})
	want := map[string]string{"counter": strconv.Itoa(writers), "mirror": strconv.Itoa(writers)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counter after %d concurrent increments (-want +got):\n%s", writers, diff)
	}
}
