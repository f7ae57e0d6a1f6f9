package storetest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// Permanent deletion: DeleteUser and DeleteWorkspace. The tests write a
// user with a record of every kind, beside records of another user, of
// no user and of another workspace, delete, and compare everything the
// store then returns with what it returned before, less what the
// deletion names.

// mailJob returns a pending mail job about the user (0 for none).
func mailJob(id, userID int64) store.Delivery {
	d := asMail(delivery(id, 0))
	d.UserID = userID
	return d
}

// grantOf returns a grant of the user (0 for a client's own).
func grantOf(id string, userID int64, created int) store.Grant {
	return store.Grant{
		ID: id, ClientID: "client-1", UserID: userID, SessionID: "sess-of-" + id, Scopes: []string{"openid"},
		AuthTime: at(created - 10), CreatedAt: at(created), ExpiresAt: at(created + 86400),
	}
}

// refreshOf returns a refresh token of the grant.
func refreshOf(id, grantID string, created int) store.RefreshToken {
	return store.RefreshToken{
		ID: id, GrantID: grantID, SecretHash: []byte("hash of " + id), CreatedAt: at(created), ExpiresAt: at(created + 86400),
	}
}

// authRequestOf returns an authorization request the user signed in to
// (0: nobody has yet).
func authRequestOf(id string, userID int64) store.AuthRequest {
	r := store.AuthRequest{
		ID: id, ClientID: "client-1", RedirectURI: "https://app.example.com/cb", Scopes: []string{"openid"},
		State: "state-" + id, CreatedAt: at(100), ExpiresAt: at(700),
	}
	if userID != 0 {
		r.UserID, r.SessionID, r.AuthTime, r.CodeHash = userID, "sess-of-"+id, at(120), []byte("code hash of "+id)
	}
	return r
}

// writeUserRecords writes into the workspace the users 1 (alice) and 2
// (bob) with records of every kind, records of no user, and webhook 1
// with two deliveries.
func writeUserRecords(tx store.Tx, slug string) error {
	reset := token("vt-2", 1, 40)
	reset.Purpose = store.PurposePasswordReset
	steps := []func() error{
		func() error { return tx.PutUser(slug, user(1, "alice", "alice@example.com", "Alice Liddell")) },
		func() error { return tx.PutUser(slug, user(2, "bob", "bob@example.com", "Bob Builder")) },
		func() error { return tx.AddUserRole(slug, 1, 10) },
		func() error { return tx.AddUserRole(slug, 1, 11) },
		func() error { return tx.AddUserRole(slug, 2, 10) },
		func() error { return tx.PutUserAttribute(slug, 1, "dept", "R&D") },
		func() error { return tx.PutUserAttribute(slug, 2, "dept", "Ops") },
		func() error { return tx.PutSession(slug, storedSession("sess-1", 1, 10)) },
		func() error { return tx.PutSession(slug, revoked(storedSession("sess-2", 1, 20), 25)) },
		func() error { return tx.PutSession(slug, storedSession("sess-b", 2, 30)) },
		func() error { return tx.PutGrant(slug, grantOf("gr-1", 1, 100)) },
		func() error { return tx.PutGrant(slug, grantOf("gr-2", 1, 200)) },
		func() error { return tx.PutGrant(slug, grantOf("gr-0", 0, 300)) },
		func() error { return tx.PutGrant(slug, grantOf("gr-b", 2, 400)) },
		func() error { return tx.PutRefreshToken(slug, refreshOf("rt-1", "gr-1", 100)) },
		func() error { return tx.PutRefreshToken(slug, refreshOf("rt-2", "gr-1", 150)) },
		func() error { return tx.PutRefreshToken(slug, refreshOf("rt-3", "gr-2", 200)) },
		func() error { return tx.PutRefreshToken(slug, refreshOf("rt-0", "gr-0", 300)) },
		func() error { return tx.PutRefreshToken(slug, refreshOf("rt-b", "gr-b", 400)) },
		func() error { return tx.PutAuthRequest(slug, authRequestOf("ar-1", 1)) },
		func() error { return tx.PutAuthRequest(slug, authRequestOf("ar-0", 0)) },
		func() error { return tx.PutAuthRequest(slug, authRequestOf("ar-b", 2)) },
		func() error { return tx.PutVerificationToken(slug, token("vt-1", 1, 30)) },
		func() error { return tx.PutVerificationToken(slug, reset) },
		func() error { return tx.PutVerificationToken(slug, token("vt-b", 2, 50)) },
		func() error {
			return tx.PutLoginAttempts(slug, store.LoginAttempts{UserID: 1, Failures: 2, LockedUntil: at(60)})
		},
		func() error { return tx.PutLoginAttempts(slug, store.LoginAttempts{UserID: 2, Failures: 1}) },
		func() error {
			return tx.PutSecondFactor(slug, store.SecondFactor{UserID: 1, Secret: []byte("alice's"), Confirmed: true, CreatedAt: at(5)})
		},
		func() error {
			return tx.PutSecondFactor(slug, store.SecondFactor{UserID: 2, Secret: []byte("bob's"), CreatedAt: at(6)})
		},
		func() error { return tx.PutPasskey(slug, passkeyOf("pk-1", 1, 7)) },
		func() error { return tx.PutPasskey(slug, passkeyOf("pk-2", 1, 8)) },
		func() error { return tx.PutPasskey(slug, passkeyOf("pk-b", 2, 9)) },
		func() error {
			return tx.PutPasskeyHandle(slug, store.PasskeyHandle{UserID: 1, Handle: []byte("alice-handle"), CreatedAt: at(7)})
		},
		func() error {
			return tx.PutPasskeyHandle(slug, store.PasskeyHandle{UserID: 2, Handle: []byte("bob-handle"), CreatedAt: at(9)})
		},
		func() error { return tx.PutWebhook(slug, webhook(1)) },
		func() error { return tx.PutDelivery(slug, delivery(1, 1)) },
		func() error { return tx.PutDelivery(slug, withStatus(delivery(2, 1), store.DeliverySucceeded)) },
		func() error { return tx.PutDelivery(slug, mailJob(3, 1)) },
		func() error { return tx.PutDelivery(slug, withStatus(mailJob(4, 1), store.DeliverySucceeded)) },
		func() error { return tx.PutDelivery(slug, mailJob(5, 2)) },
		func() error { return tx.PutDelivery(slug, mailJob(6, 0)) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("writeUserRecords step %d: %w", i, err)
		}
	}
	return nil
}

// heldRecords is what a store returns for the records writeUserRecords
// writes, keyed by a name for each ("user 1", "session sess-1", "mail
// jobs"); a record the store does not find, or a listing that comes back
// empty, has no entry.
type heldRecords map[string]any

// held reads the workspace's records that writeUserRecords writes.
func held(t *testing.T, s store.Store, slug string) heldRecords {
	t.Helper()
	h := heldRecords{}
	// keep records v under name unless err is ErrNotFound; another error
	// fails the test.
	keep := func(name string, v any, err error) {
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			t.Errorf("%s: %v", name, err)
		default:
			h[name] = v
		}
	}
	// keepList keeps a listing unless it is empty.
	keepList := func(name string, n int, v any, err error) {
		if n > 0 || err != nil {
			keep(name, v, err)
		}
	}
	view(t, s, func(tx store.Tx) error {
		users, total, err := tx.Users(slug, store.UserQuery{Limit: 100})
		keep("users", fmt.Sprint(total, " ", userIDs(users)), err)
		for _, id := range []int64{1, 2} {
			u, err := tx.User(slug, id)
			keep(fmt.Sprint("user ", id), u, err)
			roles, err := tx.UserRoles(slug, id)
			keepList(fmt.Sprint("roles of ", id), len(roles), roles, err)
			attrs, err := tx.UserAttributes(slug, id)
			keepList(fmt.Sprint("attributes of ", id), len(attrs), attrs, err)
			sessions, err := tx.UserSessions(slug, id)
			keepList(fmt.Sprint("sessions of ", id), len(sessions), sessions, err)
			grants, err := tx.UserGrants(slug, id)
			keepList(fmt.Sprint("grants of ", id), len(grants), grants, err)
			a, err := tx.LoginAttempts(slug, id)
			keep(fmt.Sprint("login attempts of ", id), a, err)
			f, err := tx.SecondFactor(slug, id)
			keep(fmt.Sprint("second factor of ", id), f, err)
			pks, err := tx.UserPasskeys(slug, id)
			keepList(fmt.Sprint("passkeys of ", id), len(pks), pks, err)
			ph, err := tx.PasskeyHandle(slug, id)
			keep(fmt.Sprint("passkey handle of ", id), ph, err)
		}
		for _, name := range []string{"alice", "ALICE", "bob"} {
			id, err := tx.UserIDByUsername(slug, name)
			keep("username "+name, id, err)
			id, err = tx.UserIDByEmail(slug, name+"@example.com")
			keep("email "+name+"@example.com", id, err)
		}
		for _, id := range []string{"sess-1", "sess-2", "sess-b"} {
			v, err := tx.Session(slug, id)
			keep("session "+id, v, err)
		}
		for _, id := range []string{"gr-1", "gr-2", "gr-0", "gr-b"} {
			v, err := tx.Grant(slug, id)
			keep("grant "+id, v, err)
		}
		for _, id := range []string{"rt-1", "rt-2", "rt-3", "rt-0", "rt-b"} {
			v, err := tx.RefreshToken(slug, id)
			keep("refresh token "+id, v, err)
		}
		for _, id := range []string{"ar-1", "ar-0", "ar-b"} {
			v, err := tx.AuthRequest(slug, id)
			keep("auth request "+id, v, err)
		}
		for _, id := range []string{"pk-1", "pk-2", "pk-b"} {
			v, err := tx.Passkey(slug, id)
			keep("passkey "+id, v, err)
		}
		for _, h := range []string{"alice-handle", "bob-handle"} {
			v, err := tx.UserIDByPasskeyHandle(slug, []byte(h))
			keep("handle "+h, v, err)
		}
		for _, id := range []string{"vt-1", "vt-2", "vt-b"} {
			v, err := tx.VerificationToken(slug, id)
			keep("token "+id, v, err)
		}
		for id := range int64(7) {
			v, err := tx.Delivery(slug, id)
			keep(fmt.Sprint("delivery ", id), v, err)
		}
		mail, err := tx.MailJobs(slug)
		keepList("mail jobs", len(mail), deliveryIDs(mail), err)
		hooks, err := tx.Deliveries(slug, 1)
		keepList("deliveries of webhook 1", len(hooks), deliveryIDs(hooks), err)
		return nil
	})
	return h
}

// deliveryIDs returns the ids of the deliveries, in order.
func deliveryIDs(ds []store.Delivery) []int64 {
	var ids []int64
	for _, d := range ds {
		ids = append(ids, d.ID)
	}
	return ids
}

// without returns a copy of h without the names.
func (h heldRecords) without(names ...string) heldRecords {
	out := maps.Clone(h)
	for _, n := range names {
		if _, ok := out[n]; !ok {
			panic("storetest: without: no record " + n)
		}
		delete(out, n)
	}
	return out
}

// sortedDue returns the names of the deliveries due by forever, sorted
// (ties in DueAt come in any stable order).
func sortedDue(t *testing.T, s store.Store) []string {
	t.Helper()
	return slices.Sorted(slices.Values(dueNames(due(t, s, forever, 1000))))
}

// pendingCount reads PendingDeliveries.
func pendingCount(t *testing.T, s store.Store) int {
	t.Helper()
	var n int
	view(t, s, func(tx store.Tx) (err error) {
		n, err = tx.PendingDeliveries()
		return err
	})
	return n
}

// deleteUser runs DeleteUser in an Update of its own, which commits
// whatever it returned, and returns its error.
func deleteUser(t *testing.T, s store.Store, slug string, id int64) error {
	t.Helper()
	var err error
	update(t, s, func(tx store.Tx) error {
		err = tx.DeleteUser(slug, id)
		return nil
	})
	return err
}

// userOneRecords are the names of what DeleteUser(slug, 1) removes from
// the records of writeUserRecords.
var userOneRecords = []string{
	"user 1", "roles of 1", "attributes of 1", "sessions of 1", "grants of 1", "login attempts of 1",
	"second factor of 1", "username alice", "username ALICE", "email alice@example.com", "email ALICE@example.com",
	"session sess-1", "session sess-2", "grant gr-1", "grant gr-2", "refresh token rt-1", "refresh token rt-2",
	"refresh token rt-3", "auth request ar-1", "token vt-1", "token vt-2", "delivery 3", "delivery 4",
	"passkeys of 1", "passkey handle of 1", "passkey pk-1", "passkey pk-2", "handle alice-handle",
}

// testDeleteUser checks DeleteUser.
func testDeleteUser(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RemovesEverythingOfTheUser", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		update(t, s, func(tx store.Tx) error { return writeUserRecords(tx, slugA) })
		update(t, s, func(tx store.Tx) error { return writeUserRecords(tx, slugB) })
		beforeA, beforeB := held(t, s, slugA), held(t, s, slugB)
		if err := deleteUser(t, s, slugA, 1); err != nil {
			t.Fatalf("DeleteUser: %v", err)
		}
		want := beforeA.without(userOneRecords...)
		want["users"] = "1 [2]"
		want["mail jobs"] = []int64{5, 6}
		if diff := cmp.Diff(want, held(t, s, slugA), equateEmpty); diff != "" {
			t.Errorf("after DeleteUser(%q, 1) (-want +got):\n%s", slugA, diff)
		}
		if diff := cmp.Diff(beforeB, held(t, s, slugB), equateEmpty); diff != "" {
			t.Errorf("DeleteUser(%q, 1) changed workspace %q (-before +after):\n%s", slugA, slugB, diff)
		}
		wantDue := []string{"acme/1", "acme/5", "acme/6", "globex/1", "globex/3", "globex/5", "globex/6"}
		if diff := cmp.Diff(wantDue, sortedDue(t, s)); diff != "" {
			t.Errorf("DueDeliveries (-want +got):\n%s", diff)
		}
		if n := pendingCount(t, s); n != 7 {
			t.Errorf("PendingDeliveries = %d, want 7", n)
		}
		// The username and email are free, and the user's id holds
		// nothing any more.
		putUsers(t, s, slugA, user(3, "Alice", "ALICE@example.com", "Alice Again"))
		view(t, s, func(tx store.Tx) error {
			if id, err := tx.UserIDByUsername(slugA, "alice"); err != nil || id != 3 {
				t.Errorf("UserIDByUsername(alice) = %d, %v; want 3", id, err)
			}
			if id, err := tx.UserIDByEmail(slugA, "alice@example.com"); err != nil || id != 3 {
				t.Errorf("UserIDByEmail(alice@example.com) = %d, %v; want 3", id, err)
			}
			if users, total, err := tx.Users(slugA, store.UserQuery{Prefix: "ali", Limit: 10}); err != nil || total != 1 || len(users) != 1 || users[0].ID != 3 {
				t.Errorf("Users(prefix ali) = %v, %d, %v; want user 3 alone", userIDs(users), total, err)
			}
			return nil
		})
		checkErr(t, "DeleteUser of the deleted user", deleteUser(t, s, slugA, 1), store.ErrNotFound)
	})

	t.Run("UnknownUser", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		update(t, s, func(tx store.Tx) error { return writeUserRecords(tx, slugA) })
		before := held(t, s, slugA)
		// 7 has no user record, though nothing stops a store holding a
		// session of it.
		putSessions(t, s, slugA, storedSession("sess-7", 7, 70))
		checkErr(t, "DeleteUser of user 7", deleteUser(t, s, slugA, 7), store.ErrNotFound)
		checkErr(t, "DeleteUser of user 0", deleteUser(t, s, slugA, 0), store.ErrNotFound)
		checkErr(t, "DeleteUser in a missing workspace", deleteUser(t, s, slugMissing, 1), store.ErrNotFound)
		if diff := cmp.Diff(before, held(t, s, slugA), equateEmpty); diff != "" {
			t.Errorf("a refused DeleteUser changed the store (-before +after):\n%s", diff)
		}
		checkSession(t, s, slugA, storedSession("sess-7", 7, 70))
	})

	t.Run("RollsBack", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		update(t, s, func(tx store.Tx) error { return writeUserRecords(tx, slugA) })
		before, beforeDue := held(t, s, slugA), sortedDue(t, s)
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.DeleteUser(slugA, 1); err != nil {
				return err
			}
			return errBoom
		})
		checkErr(t, "Update", err, errBoom)
		if diff := cmp.Diff(before, held(t, s, slugA), equateEmpty); diff != "" {
			t.Errorf("a rolled back DeleteUser changed the store (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(beforeDue, sortedDue(t, s)); diff != "" {
			t.Errorf("a rolled back DeleteUser changed the due index (-before +after):\n%s", diff)
		}
	})

	t.Run("InOneTransaction", func(t *testing.T) {
		// Written, deleted and read in one Update: the transaction sees
		// its own deletion, and the user counts come out right.
		s := newStoreWith(t, newStore, slugA)
		var got heldRecords
		var gotUsers string
		update(t, s, func(tx store.Tx) error {
			if err := writeUserRecords(tx, slugA); err != nil {
				return err
			}
			if err := tx.DeleteUser(slugA, 1); err != nil {
				return fmt.Errorf("DeleteUser: %w", err)
			}
			users, total, err := tx.Users(slugA, store.UserQuery{Limit: 10})
			gotUsers = fmt.Sprint(total, " ", userIDs(users))
			if err != nil {
				return err
			}
			if _, err := tx.Session(slugA, "sess-1"); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("Session(sess-1) in the deleting transaction: %v, want ErrNotFound", err)
			}
			if _, err := tx.Delivery(slugA, 3); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("Delivery(3) in the deleting transaction: %v, want ErrNotFound", err)
			}
			return nil
		})
		if gotUsers != "1 [2]" {
			t.Errorf("Users in the deleting transaction = %s, want 1 [2]", gotUsers)
		}
		got = held(t, s, slugA)
		if got["users"] != "1 [2]" {
			t.Errorf("Users after it = %v, want 1 [2]", got["users"])
		}
		for _, name := range userOneRecords {
			if _, ok := got[name]; ok {
				t.Errorf("%s outlived DeleteUser in the transaction that wrote it", name)
			}
		}
		if n := pendingCount(t, s); n != 3 {
			t.Errorf("PendingDeliveries = %d, want 3 (deliveries 1, 5 and 6)", n)
		}
	})

	t.Run("FollowsChangedRecords", func(t *testing.T) {
		// Records that came to be the user's after they were written (a
		// request signed in to, a mail job or token rewritten) go with it;
		// those that stopped being the user's stay.
		s := newStoreWith(t, newStore, slugA)
		update(t, s, func(tx store.Tx) error { return writeUserRecords(tx, slugA) })
		movedToken := token("vt-1", 2, 30) // was user 1's
		update(t, s, func(tx store.Tx) error {
			steps := []error{
				tx.PutAuthRequest(slugA, authRequestOf("ar-0", 1)), // signed in to by user 1
				tx.PutAuthRequest(slugA, authRequestOf("ar-1", 2)), // was user 1's
				tx.PutVerificationToken(slugA, movedToken),
				tx.PutDelivery(slugA, mailJob(6, 1)),                                   // about user 1 now
				tx.PutDelivery(slugA, withStatus(mailJob(3, 2), store.DeliveryFailed)), // was user 1's
				tx.PutRefreshToken(slugA, refreshOf("rt-0", "gr-1", 300)),              // now of a grant of user 1
				tx.PutRefreshToken(slugA, refreshOf("rt-1", "gr-b", 100)),              // was of gr-1
				tx.PutGrant(slugA, grantOf("gr-2", 2, 200)),                            // was user 1's
			}
			return errors.Join(steps...)
		})
		if err := deleteUser(t, s, slugA, 1); err != nil {
			t.Fatalf("DeleteUser: %v", err)
		}
		got := held(t, s, slugA)
		for _, gone := range []string{"auth request ar-0", "delivery 6", "refresh token rt-0", "refresh token rt-2", "grant gr-1"} {
			if _, ok := got[gone]; ok {
				t.Errorf("%s outlived DeleteUser of the user it came to belong to", gone)
			}
		}
		want := map[string]any{
			"auth request ar-1":  authRequestOf("ar-1", 2),
			"token vt-1":         movedToken,
			"delivery 3":         withStatus(mailJob(3, 2), store.DeliveryFailed),
			"refresh token rt-1": refreshOf("rt-1", "gr-b", 100),
			"refresh token rt-3": refreshOf("rt-3", "gr-2", 200),
			"grant gr-2":         grantOf("gr-2", 2, 200),
		}
		for name, w := range want {
			if diff := cmp.Diff(w, got[name], equateEmpty); diff != "" {
				t.Errorf("%s, no longer user 1's, after DeleteUser (-want +got):\n%s", name, diff)
			}
		}
	})
}

// deleteWorkspace runs DeleteWorkspace in an Update of its own, which
// commits whatever it returned, and returns its error.
func deleteWorkspace(t *testing.T, s store.Store, slug string) error {
	t.Helper()
	var err error
	update(t, s, func(tx store.Tx) error {
		err = tx.DeleteWorkspace(slug)
		return nil
	})
	return err
}

// writeWorkspaceRecords writes into the workspace what writeUserRecords
// does and a record of every other kind: a claim mapper, an API key
// named after the workspace, an OAuth client, a signing key, an
// idempotency record, and a draw from each sequence.
func writeWorkspaceRecords(tx store.Tx, slug string) error {
	if err := writeUserRecords(tx, slug); err != nil {
		return err
	}
	steps := []func() error{
		func() error {
			return tx.PutClaimMapper(slug, store.ClaimMapper{AttributeKey: "dept", ClaimName: "department"})
		},
		func() error { return tx.PutAPIKey(apiKey("key-"+slug, slug)) },
		func() error { return tx.PutOAuthClient(slug, oauthClient("client-1", 1)) },
		func() error {
			return tx.PutSigningKey(slug, store.SigningKey{ID: "kid-1", Algorithm: "ES256", State: "active", CreatedAt: at(1)})
		},
		func() error { return tx.PutIdempotency(idem(slug, "scope", "key-1", 500)) },
		func() error { return tx.PutAsset(slug, asset("logo", "image/png", 1)) },
		func() error { _, err := tx.NextID(slug, store.SeqUsers); return err },
		func() error { _, err := tx.NextID(slug, store.SeqWebhooks); return err },
		func() error { _, err := tx.NextID(slug, store.SeqDeliveries); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("writeWorkspaceRecords step %d: %w", i, err)
		}
	}
	return nil
}

// workspaceHolds reads what the workspace holds of what
// writeWorkspaceRecords writes besides the records of held, by name; a
// missing workspace holds nothing.
func workspaceHolds(t *testing.T, s store.Store, slug string) heldRecords {
	t.Helper()
	h := held(t, s, slug)
	view(t, s, func(tx store.Tx) error {
		if w, err := tx.Workspace(slug); err == nil {
			h["workspace"] = w
		}
		if ms, err := tx.ClaimMappers(slug); err == nil && len(ms) > 0 {
			h["claim mappers"] = ms
		}
		if k, err := tx.APIKey("key-" + slug); err == nil {
			h["api key"] = k
		}
		if ks, err := tx.APIKeys(slug); err == nil && len(ks) > 0 {
			h["api keys"] = ks
		}
		if cs, err := tx.OAuthClients(slug); err == nil && len(cs) > 0 {
			h["clients"] = cs
		}
		if ks, err := tx.SigningKeys(slug); err == nil && len(ks) > 0 {
			h["signing keys"] = ks
		}
		if r, err := tx.Idempotency(slug, "scope", "key-1"); err == nil {
			h["idempotency key-1"] = r
		}
		if hooks, total, err := tx.Webhooks(slug, 0, 10); err == nil && total > 0 {
			h["webhooks"] = hooks
		}
		if a, err := tx.Asset(slug, "logo"); err == nil {
			h["asset logo"] = a
		}
		return nil
	})
	if h["users"] == "0 []" {
		delete(h, "users") // an empty workspace's listing
	}
	return h
}

// testDeleteWorkspace checks DeleteWorkspace.
func testDeleteWorkspace(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RemovesEverythingOfTheWorkspace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		update(t, s, func(tx store.Tx) error { return writeWorkspaceRecords(tx, slugA) })
		update(t, s, func(tx store.Tx) error { return writeWorkspaceRecords(tx, slugB) })
		beforeB := workspaceHolds(t, s, slugB)
		if err := deleteWorkspace(t, s, slugA); err != nil {
			t.Fatalf("DeleteWorkspace: %v", err)
		}
		if diff := cmp.Diff(heldRecords{}, workspaceHolds(t, s, slugA)); diff != "" {
			t.Errorf("what the deleted workspace holds (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(beforeB, workspaceHolds(t, s, slugB), equateEmpty); diff != "" {
			t.Errorf("DeleteWorkspace(%q) changed workspace %q (-before +after):\n%s", slugA, slugB, diff)
		}
		view(t, s, func(tx store.Tx) error {
			ws, err := tx.Workspaces()
			if err != nil || len(ws) != 1 || ws[0].Slug != slugB {
				t.Errorf("Workspaces = %v, %v; want %s alone", ws, err, slugB)
			}
			_, err = tx.APIKey("key-" + slugA)
			checkErr(t, "APIKey of the deleted workspace", err, store.ErrNotFound)
			return nil
		})
		wantDue := []string{"globex/1", "globex/3", "globex/5", "globex/6"}
		if diff := cmp.Diff(wantDue, sortedDue(t, s)); diff != "" {
			t.Errorf("DueDeliveries (-want +got):\n%s", diff)
		}
		if n := pendingCount(t, s); n != 4 {
			t.Errorf("PendingDeliveries = %d, want 4", n)
		}
		// The expiry sweep finds the other workspace's record alone.
		var swept int
		update(t, s, func(tx store.Tx) (err error) {
			swept, err = tx.DeleteExpiredIdempotency(forever, 100)
			return err
		})
		if swept != 1 {
			t.Errorf("DeleteExpiredIdempotency = %d, want 1 (globex's)", swept)
		}
		checkErr(t, "DeleteWorkspace of the deleted workspace", deleteWorkspace(t, s, slugA), store.ErrNotFound)
		checkErr(t, "DeleteWorkspace of a missing workspace", deleteWorkspace(t, s, slugMissing), store.ErrNotFound)
	})

	t.Run("CreatedAgainIsEmpty", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		update(t, s, func(tx store.Tx) error { return writeWorkspaceRecords(tx, slugA) })
		if err := deleteWorkspace(t, s, slugA); err != nil {
			t.Fatalf("DeleteWorkspace: %v", err)
		}
		update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(workspace(slugA)) })
		want := heldRecords{"workspace": workspace(slugA)}
		if diff := cmp.Diff(want, workspaceHolds(t, s, slugA), equateEmpty); diff != "" {
			t.Errorf("the workspace created again holds (-want +got):\n%s", diff)
		}
		var ids []int64
		update(t, s, func(tx store.Tx) error {
			ids = nil
			for _, seq := range []store.Sequence{store.SeqUsers, store.SeqWebhooks, store.SeqDeliveries} {
				id, err := tx.NextID(slugA, seq)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return nil
		})
		if diff := cmp.Diff([]int64{1, 1, 1}, ids); diff != "" {
			t.Errorf("NextID of each sequence (-want +got):\n%s", diff)
		}
		// Its records are written as in a new workspace.
		update(t, s, func(tx store.Tx) error { return writeUserRecords(tx, slugA) })
		if got := held(t, s, slugA)["users"]; got != "2 [1 2]" {
			t.Errorf("Users = %v, want 2 [1 2]", got)
		}
	})

	t.Run("InOneTransaction", func(t *testing.T) {
		// Written, deleted, created again and drawn from in one Update:
		// nothing the transaction held of the old workspace survives.
		s := newStoreWith(t, newStore, slugA)
		update(t, s, func(tx store.Tx) error { return writeWorkspaceRecords(tx, slugA) })
		var ids []int64
		var users string
		update(t, s, func(tx store.Tx) error {
			ids = nil
			for range 2 {
				id, err := tx.NextID(slugA, store.SeqUsers)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			if err := tx.PutUser(slugA, user(9, "ivy", "ivy@example.com", "Ivy")); err != nil {
				return err
			}
			if err := tx.DeleteWorkspace(slugA); err != nil {
				return fmt.Errorf("DeleteWorkspace: %w", err)
			}
			if _, err := tx.Workspace(slugA); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("Workspace after DeleteWorkspace: %v, want ErrNotFound", err)
			}
			if _, err := tx.NextID(slugA, store.SeqUsers); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("NextID after DeleteWorkspace: %v, want ErrNotFound", err)
			}
			if err := tx.PutWorkspace(workspace(slugA)); err != nil {
				return err
			}
			id, err := tx.NextID(slugA, store.SeqUsers)
			if err != nil {
				return err
			}
			ids = append(ids, id)
			if err := tx.PutUser(slugA, user(1, "ann", "ann@example.com", "Ann")); err != nil {
				return err
			}
			list, total, err := tx.Users(slugA, store.UserQuery{Limit: 10})
			users = fmt.Sprint(total, " ", userIDs(list))
			return err
		})
		if diff := cmp.Diff([]int64{2, 3, 1}, ids); diff != "" {
			t.Errorf("NextID before and after DeleteWorkspace (-want +got):\n%s", diff)
		}
		if users != "1 [1]" {
			t.Errorf("Users in the transaction = %s, want 1 [1]", users)
		}
		var next int64
		update(t, s, func(tx store.Tx) (err error) {
			next, err = tx.NextID(slugA, store.SeqUsers)
			return err
		})
		if next != 2 {
			t.Errorf("NextID after the commit = %d, want 2", next)
		}
		if got := held(t, s, slugA)["users"]; got != "1 [1]" {
			t.Errorf("Users after the commit = %v, want 1 [1]", got)
		}
		if n := pendingCount(t, s); n != 0 {
			t.Errorf("PendingDeliveries = %d, want 0", n)
		}
	})

	t.Run("RollsBack", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		update(t, s, func(tx store.Tx) error { return writeWorkspaceRecords(tx, slugA) })
		before, beforeDue := workspaceHolds(t, s, slugA), sortedDue(t, s)
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.DeleteWorkspace(slugA); err != nil {
				return err
			}
			return errBoom
		})
		checkErr(t, "Update", err, errBoom)
		if diff := cmp.Diff(before, workspaceHolds(t, s, slugA), equateEmpty); diff != "" {
			t.Errorf("a rolled back DeleteWorkspace changed the store (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(beforeDue, sortedDue(t, s)); diff != "" {
			t.Errorf("a rolled back DeleteWorkspace changed the due index (-before +after):\n%s", diff)
		}
	})
}
