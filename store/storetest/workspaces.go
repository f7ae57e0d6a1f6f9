package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// testWorkspaces checks PutWorkspace, Workspace and Workspaces, and that
// every method naming a missing workspace returns ErrNotFound.
func testWorkspaces(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Empty", func(t *testing.T) {
		s := newStore(t)
		view(t, s, func(tx store.Tx) error {
			ws, err := tx.Workspaces()
			if err != nil || len(ws) != 0 {
				t.Errorf("Workspaces = %v, %v; want none", ws, err)
			}
			_, err = tx.Workspace(slugA)
			checkErr(t, "Workspace", err, store.ErrNotFound)
			return nil
		})
	})

	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		want := []store.Workspace{
			{Slug: "alpha", CreatedAt: at(1), Settings: []byte{0, 1, 2, 0xff}},
			{Slug: "beta", CreatedAt: at(2)},
			{Slug: "gamma", CreatedAt: at(3), Settings: []byte(`{"a":1}`)},
			{Slug: "zeta", CreatedAt: time.Time{}, Settings: []byte{}},
		}
		update(t, s, func(tx store.Tx) error {
			for _, i := range []int{3, 0, 2, 1} {
				if err := tx.PutWorkspace(want[i]); err != nil {
					return err
				}
			}
			return nil
		})
		view(t, s, func(tx store.Tx) error {
			for _, w := range want {
				got, err := tx.Workspace(w.Slug)
				if err != nil {
					t.Errorf("Workspace(%q): %v", w.Slug, err)
					continue
				}
				if diff := cmp.Diff(w, got, equateEmpty); diff != "" {
					t.Errorf("Workspace(%q) mismatch (-want +got):\n%s", w.Slug, diff)
				}
			}
			got, err := tx.Workspaces()
			if err != nil {
				return err
			}
			if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
				t.Errorf("Workspaces mismatch (-want +got):\n%s", diff)
			}
			return nil
		})
	})

	t.Run("TimesInUTC", func(t *testing.T) {
		s := newStore(t)
		zoned := at(5).In(time.FixedZone("UTC+5", 5*3600))
		update(t, s, func(tx store.Tx) error {
			if err := tx.PutWorkspace(store.Workspace{Slug: slugA, CreatedAt: zoned}); err != nil {
				return err
			}
			u := user(1, "alice", "alice@example.com", "Alice")
			u.CreatedAt, u.UpdatedAt = zoned, zoned
			return tx.PutUser(slugA, u)
		})
		view(t, s, func(tx store.Tx) error {
			w, err := tx.Workspace(slugA)
			if err != nil {
				return err
			}
			if !w.CreatedAt.Equal(zoned) || w.CreatedAt.Location() != time.UTC {
				t.Errorf("Workspace.CreatedAt = %v, want %v in UTC", w.CreatedAt, zoned.UTC())
			}
			u, err := tx.User(slugA, 1)
			if err != nil {
				return err
			}
			if !u.CreatedAt.Equal(zoned) || u.CreatedAt.Location() != time.UTC {
				t.Errorf("User.CreatedAt = %v, want %v in UTC", u.CreatedAt, zoned.UTC())
			}
			return nil
		})
	})

	t.Run("ReplaceKeepsNamespace", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		update(t, s, func(tx store.Tx) error {
			if _, err := tx.NextID(slugA, store.SeqUsers); err != nil {
				return err
			}
			if err := writeEverything(tx, slugA); err != nil {
				return err
			}
			return nil
		})
		before := takeSnapshot(t, s, slugA)
		replaced := store.Workspace{Slug: slugA, CreatedAt: at(9), Settings: []byte("new settings")}
		update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(replaced) })

		after := takeSnapshot(t, s, slugA)
		before.Workspaces[0] = replaced
		if diff := cmp.Diff(before, after, equateEmpty); diff != "" {
			t.Errorf("state after replacing the workspace record (-want +got):\n%s", diff)
		}
		var next int64
		update(t, s, func(tx store.Tx) error {
			var err error
			next, err = tx.NextID(slugA, store.SeqUsers)
			return err
		})
		if next <= 1 {
			t.Errorf("NextID after replacing the workspace = %d, want > 1", next)
		}
	})

	t.Run("Copies", func(t *testing.T) {
		s := newStore(t)
		w := store.Workspace{Slug: slugA, CreatedAt: at(1), Settings: []byte("abc")}
		update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(w) })
		w.Settings[0] = 'X'
		var got, got2 store.Workspace
		var list []store.Workspace
		view(t, s, func(tx store.Tx) error {
			var err error
			if got, err = tx.Workspace(slugA); err != nil {
				return err
			}
			list, err = tx.Workspaces()
			return err
		})
		if string(got.Settings) != "abc" {
			t.Fatalf("Settings = %q after the caller changed its slice, want %q", got.Settings, "abc")
		}
		got.Settings[0] = 'Y'
		list[0].Settings[1] = 'Z'
		view(t, s, func(tx store.Tx) error {
			var err error
			got2, err = tx.Workspace(slugA)
			return err
		})
		if string(got2.Settings) != "abc" {
			t.Errorf("Settings = %q after the caller changed returned slices, want %q", got2.Settings, "abc")
		}
	})

	t.Run("MissingWorkspace", func(t *testing.T) {
		testMissingWorkspace(t, newStore)
	})
}

// testMissingWorkspace calls every method that names a workspace with one
// that does not exist.
func testMissingWorkspace(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA)
	update(t, s, func(tx store.Tx) error { return writeEverything(tx, slugA) })
	const m = slugMissing
	reads := []struct {
		name string
		fn   func(tx store.Tx) error
	}{
		{"Workspace", func(tx store.Tx) error { _, err := tx.Workspace(m); return err }},
		{"User", func(tx store.Tx) error { _, err := tx.User(m, 1); return err }},
		{"UserIDByUsername", func(tx store.Tx) error { _, err := tx.UserIDByUsername(m, "alice"); return err }},
		{"UserIDByEmail", func(tx store.Tx) error { _, err := tx.UserIDByEmail(m, "alice@example.com"); return err }},
		{"Users", func(tx store.Tx) error { _, _, err := tx.Users(m, store.UserQuery{Limit: 10}); return err }},
		{"UserRoles", func(tx store.Tx) error { _, err := tx.UserRoles(m, 1); return err }},
		{"UserAttributes", func(tx store.Tx) error { _, err := tx.UserAttributes(m, 1); return err }},
		{"ClaimMappers", func(tx store.Tx) error { _, err := tx.ClaimMappers(m); return err }},
		{"Webhook", func(tx store.Tx) error { _, err := tx.Webhook(m, 1); return err }},
		{"Webhooks", func(tx store.Tx) error { _, _, err := tx.Webhooks(m, 0, 10); return err }},
		{"Delivery", func(tx store.Tx) error { _, err := tx.Delivery(m, 1); return err }},
		{"Deliveries", func(tx store.Tx) error { _, err := tx.Deliveries(m, 1); return err }},
		{"MailJobs", func(tx store.Tx) error { _, err := tx.MailJobs(m); return err }},
		{"Session", func(tx store.Tx) error { _, err := tx.Session(m, "sess-1"); return err }},
		{"UserSessions", func(tx store.Tx) error { _, err := tx.UserSessions(m, 1); return err }},
		{"APIKeys", func(tx store.Tx) error { _, err := tx.APIKeys(m); return err }},
		{"OAuthClient", func(tx store.Tx) error { _, err := tx.OAuthClient(m, "client-1"); return err }},
		{"OAuthClients", func(tx store.Tx) error { _, err := tx.OAuthClients(m); return err }},
		{"SigningKeys", func(tx store.Tx) error { _, err := tx.SigningKeys(m); return err }},
		{"AuthRequest", func(tx store.Tx) error { _, err := tx.AuthRequest(m, "ar-1"); return err }},
		{"Grant", func(tx store.Tx) error { _, err := tx.Grant(m, "gr-1"); return err }},
		{"UserGrants", func(tx store.Tx) error { _, err := tx.UserGrants(m, 1); return err }},
		{"RefreshToken", func(tx store.Tx) error { _, err := tx.RefreshToken(m, "rt-1"); return err }},
		{"LoginAttempts", func(tx store.Tx) error { _, err := tx.LoginAttempts(m, 1); return err }},
		{"SecondFactor", func(tx store.Tx) error { _, err := tx.SecondFactor(m, 1); return err }},
	}
	writes := []struct {
		name string
		fn   func(tx store.Tx) error
	}{
		{"NextID", func(tx store.Tx) error { _, err := tx.NextID(m, store.SeqUsers); return err }},
		{"PutUser", func(tx store.Tx) error { return tx.PutUser(m, user(5, "eve", "eve@example.com", "Eve")) }},
		{"AddUserRole", func(tx store.Tx) error { return tx.AddUserRole(m, 1, 10) }},
		{"RemoveUserRole", func(tx store.Tx) error { return tx.RemoveUserRole(m, 1, 10) }},
		{"PutUserAttribute", func(tx store.Tx) error { return tx.PutUserAttribute(m, 1, "dept", "x") }},
		{"DeleteUserAttribute", func(tx store.Tx) error { return tx.DeleteUserAttribute(m, 1, "dept") }},
		{"PutClaimMapper", func(tx store.Tx) error {
			return tx.PutClaimMapper(m, store.ClaimMapper{AttributeKey: "dept", ClaimName: "d"})
		}},
		{"DeleteClaimMapper", func(tx store.Tx) error { return tx.DeleteClaimMapper(m, "dept") }},
		{"PutWebhook", func(tx store.Tx) error { return tx.PutWebhook(m, webhook(1)) }},
		{"DeleteWebhook", func(tx store.Tx) error { return tx.DeleteWebhook(m, 1) }},
		{"PutDelivery", func(tx store.Tx) error { return tx.PutDelivery(m, delivery(1, 1)) }},
		{"PutDelivery(mail)", func(tx store.Tx) error { return tx.PutDelivery(m, asMail(delivery(1, 0))) }},
		{"ClaimDelivery", func(tx store.Tx) error { _, _, err := tx.ClaimDelivery(m, 1); return err }},
		{"PutSession", func(tx store.Tx) error { return tx.PutSession(m, storedSession("sess-1", 1, 1)) }},
		{"PutAPIKey", func(tx store.Tx) error { return tx.PutAPIKey(apiKey("key-m", m)) }},
		{"PutOAuthClient", func(tx store.Tx) error { return tx.PutOAuthClient(m, oauthClient("client-1", 1)) }},
		{"DeleteOAuthClient", func(tx store.Tx) error { return tx.DeleteOAuthClient(m, "client-1") }},
		{"PutSigningKey", func(tx store.Tx) error {
			return tx.PutSigningKey(m, store.SigningKey{ID: "kid-1", Algorithm: "ES256", State: "next", CreatedAt: at(1)})
		}},
		{"DeleteSigningKey", func(tx store.Tx) error { return tx.DeleteSigningKey(m, "kid-1") }},
		{"PutAuthRequest", func(tx store.Tx) error {
			return tx.PutAuthRequest(m, store.AuthRequest{ID: "ar-1", ClientID: "client-1", CreatedAt: at(1)})
		}},
		{"PutGrant", func(tx store.Tx) error {
			return tx.PutGrant(m, store.Grant{ID: "gr-1", ClientID: "client-1", UserID: 1, CreatedAt: at(1)})
		}},
		{"PutRefreshToken", func(tx store.Tx) error {
			return tx.PutRefreshToken(m, store.RefreshToken{ID: "rt-1", GrantID: "gr-1", CreatedAt: at(1)})
		}},
		{"PutLoginAttempts", func(tx store.Tx) error {
			return tx.PutLoginAttempts(m, store.LoginAttempts{UserID: 1, Failures: 3, Pending: []time.Time{at(2)}, LockedUntil: at(5)})
		}},
		{"PutSecondFactor", func(tx store.Tx) error {
			return tx.PutSecondFactor(m, store.SecondFactor{UserID: 1, Secret: []byte("s"), CreatedAt: at(1)})
		}},
		{"DeleteSecondFactor", func(tx store.Tx) error { return tx.DeleteSecondFactor(m, 1) }},
		{"DeleteUser", func(tx store.Tx) error { return tx.DeleteUser(m, 1) }},
		{"DeleteWorkspace", func(tx store.Tx) error { return tx.DeleteWorkspace(m) }},
	}
	before := takeSnapshot(t, s, slugA)
	view(t, s, func(tx store.Tx) error {
		for _, r := range reads {
			checkErr(t, r.name, r.fn(tx), store.ErrNotFound)
		}
		return nil
	})
	var errs []error
	update(t, s, func(tx store.Tx) error {
		errs = make([]error, len(writes))
		for i, w := range writes {
			errs[i] = w.fn(tx)
		}
		return nil // commit: the failed writes must have written nothing
	})
	for i, w := range writes {
		checkErr(t, w.name, errs[i], store.ErrNotFound)
	}
	after := takeSnapshot(t, s, slugA)
	if diff := cmp.Diff(before, after, equateEmpty); diff != "" {
		t.Errorf("writes to a missing workspace changed the store (-before +after):\n%s", diff)
	}
	view(t, s, func(tx store.Tx) error {
		_, err := tx.APIKey("key-m")
		checkErr(t, "APIKey of a key put into a missing workspace", err, store.ErrNotFound)
		_, err = tx.Workspace(m)
		checkErr(t, "Workspace after writes to it", err, store.ErrNotFound)
		return nil
	})
}

// testSequences checks NextID.
func testSequences(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("StartAtOneAndIncrease", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA, slugB)
		type draw struct {
			slug string
			seq  store.Sequence
		}
		draws := []draw{
			{slugA, store.SeqUsers}, {slugA, store.SeqUsers}, {slugA, store.SeqWebhooks},
			{slugB, store.SeqUsers}, {slugA, store.SeqDeliveries}, {slugA, store.SeqUsers},
			{slugB, store.SeqUsers}, {slugA, store.SeqWebhooks},
		}
		var got []int64
		// Some draws share a transaction, some do not.
		for _, batch := range [][]draw{draws[:3], draws[3:4], draws[4:]} {
			var ids []int64
			update(t, s, func(tx store.Tx) error {
				ids = nil
				for _, d := range batch {
					id, err := tx.NextID(d.slug, d.seq)
					if err != nil {
						return fmt.Errorf("NextID(%q, %q): %w", d.slug, d.seq, err)
					}
					ids = append(ids, id)
				}
				return nil
			})
			got = append(got, ids...)
		}
		last := map[draw]int64{}
		for i, d := range draws {
			prev, seen := last[d]
			switch {
			case !seen && got[i] != 1:
				t.Errorf("first NextID(%q, %q) = %d, want 1", d.slug, d.seq, got[i])
			case seen && got[i] <= prev:
				t.Errorf("NextID(%q, %q) = %d after %d, want strictly increasing", d.slug, d.seq, got[i], prev)
			}
			last[d] = got[i]
		}
	})

	t.Run("RollbackNeverRepeatsCommitted", func(t *testing.T) {
		s := newStoreWith(t, newStore, slugA)
		var first, next int64
		update(t, s, func(tx store.Tx) error {
			var err error
			first, err = tx.NextID(slugA, store.SeqUsers)
			return err
		})
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if _, err := tx.NextID(slugA, store.SeqUsers); err != nil {
				return err
			}
			return errBoom
		})
		if err != errBoom {
			t.Fatalf("Update error = %v, want errBoom", err)
		}
		update(t, s, func(tx store.Tx) error {
			var err error
			next, err = tx.NextID(slugA, store.SeqUsers)
			return err
		})
		if first != 1 || next <= first {
			t.Errorf("committed NextIDs around a rolled-back one = %d, %d; want 1, then > 1", first, next)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		const n = 30
		s := newStoreWith(t, newStore, slugA)
		ids := make(chan int64, n)
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				var id int64
				err := s.Update(t.Context(), func(tx store.Tx) error {
					var err error
					id, err = tx.NextID(slugA, store.SeqDeliveries)
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				ids <- id
			})
		}
		wg.Wait()
		close(ids)
		close(errs)
		for err := range errs {
			t.Errorf("concurrent NextID: %v", err)
		}
		var got []int64
		for id := range ids {
			got = append(got, id)
		}
		slices.Sort(got)
		if len(got) != n || got[0] != 1 || len(slices.Compact(slices.Clone(got))) != n {
			t.Errorf("concurrent NextIDs = %v; want %d distinct values starting at 1", got, n)
		}
	})

	t.Run("MissingWorkspace", func(t *testing.T) {
		s := newStore(t)
		err := s.Update(t.Context(), func(tx store.Tx) error {
			_, err := tx.NextID(slugMissing, store.SeqUsers)
			return err
		})
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("NextID on a missing workspace: error = %v, want ErrNotFound", err)
		}
	})
}
