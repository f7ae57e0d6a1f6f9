package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// oauthClient returns a confidential client record with every field set.
func oauthClient(id string, n int) store.OAuthClient {
	return store.OAuthClient{
		ID:                     id,
		Name:                   "client " + id + " ü",
		RedirectURIs:           []string{"https://app.example.com/cb/" + id, "http://127.0.0.1:8080/cb"},
		PostLogoutRedirectURIs: []string{"https://app.example.com/bye"},
		GrantTypes:             []string{"authorization_code", "refresh_token", "client_credentials"},
		SecretHash:             []byte("hash-of-" + id + "\x00\xff"),
		CreatedAt:              at(n),
	}
}

// publicClient returns a public client record: no secret hash, no
// post-logout URIs.
func publicClient(id string, n int) store.OAuthClient {
	return store.OAuthClient{
		ID:           id,
		Public:       true,
		RedirectURIs: []string{"https://spa.example.com/" + id},
		GrantTypes:   []string{"authorization_code"},
		CreatedAt:    at(n),
	}
}

// testOAuthClients checks PutOAuthClient, OAuthClient, OAuthClients and
// DeleteOAuthClient.
func testOAuthClients(t *testing.T, newStore func(t *testing.T) store.Store) {
	const slugC = "initech"
	list := func(t *testing.T, s store.Store, slug string) []store.OAuthClient {
		t.Helper()
		var got []store.OAuthClient
		view(t, s, func(tx store.Tx) error {
			var err error
			got, err = tx.OAuthClients(slug)
			return err
		})
		return got
	}
	checkList := func(t *testing.T, s store.Store, slug string, want []store.OAuthClient) {
		t.Helper()
		if diff := cmp.Diff(want, list(t, s, slug), equateEmpty); diff != "" {
			t.Errorf("OAuthClients(%q) mismatch (-want +got):\n%s", slug, diff)
		}
	}
	checkClient := func(t *testing.T, s store.Store, slug string, want store.OAuthClient) {
		t.Helper()
		view(t, s, func(tx store.Tx) error {
			got, err := tx.OAuthClient(slug, want.ID)
			if err != nil {
				t.Errorf("OAuthClient(%q, %q): %v", slug, want.ID, err)
				return nil
			}
			if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
				t.Errorf("OAuthClient(%q, %q) mismatch (-want +got):\n%s", slug, want.ID, diff)
			}
			return nil
		})
	}
	checkMissing := func(t *testing.T, s store.Store, slug, id string) {
		t.Helper()
		view(t, s, func(tx store.Tx) error {
			_, err := tx.OAuthClient(slug, id)
			checkErr(t, fmt.Sprintf("OAuthClient(%q, %q)", slug, id), err, store.ErrNotFound)
			return nil
		})
	}
	put := func(t *testing.T, s store.Store, slug string, cs ...store.OAuthClient) {
		t.Helper()
		update(t, s, func(tx store.Tx) error {
			for _, c := range cs {
				if err := tx.PutOAuthClient(slug, c); err != nil {
					return fmt.Errorf("PutOAuthClient(%q, %q): %w", slug, c.ID, err)
				}
			}
			return nil
		})
	}
	// setup creates clients c3 and c1 in slugA, c2 (public) in slugB, none
	// in slugC.
	setup := func(t *testing.T) store.Store {
		t.Helper()
		s := newStoreWith(t, newStore, slugA, slugB, slugC)
		put(t, s, slugA, oauthClient("c3", 3))
		put(t, s, slugB, publicClient("c2", 2))
		put(t, s, slugA, oauthClient("c1", 1))
		return s
	}

	t.Run("RoundTrip", func(t *testing.T) {
		s := setup(t)
		bare := store.OAuthClient{ID: "c0"} // nil slices, zero time
		put(t, s, slugC, bare)
		checkClient(t, s, slugA, oauthClient("c1", 1))
		checkClient(t, s, slugA, oauthClient("c3", 3))
		checkClient(t, s, slugB, publicClient("c2", 2))
		checkClient(t, s, slugC, bare)
		checkList(t, s, slugA, []store.OAuthClient{oauthClient("c1", 1), oauthClient("c3", 3)})
		checkList(t, s, slugB, []store.OAuthClient{publicClient("c2", 2)})
		checkList(t, s, slugC, []store.OAuthClient{bare})
	})

	t.Run("EmptyWorkspace", func(t *testing.T) {
		s := setup(t)
		checkList(t, s, slugC, nil)
	})

	t.Run("ListingOrder", func(t *testing.T) {
		// Ascending byte order, whatever the order of writing: upper case
		// before lower case, "a10" before "a2", multi-byte UTF-8 last.
		s := newStoreWith(t, newStore, slugA)
		ids := []string{"b", "é", "a2", "B", "a10", "a", "idc_ffff", "idc_0000"}
		for i, id := range ids {
			put(t, s, slugA, publicClient(id, i)) // one transaction each
		}
		var got []string
		for _, c := range list(t, s, slugA) {
			got = append(got, c.ID)
		}
		want := []string{"B", "a", "a10", "a2", "b", "idc_0000", "idc_ffff", "é"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("OAuthClients order (-want +got):\n%s", diff)
		}
	})

	t.Run("NotFound", func(t *testing.T) {
		s := setup(t)
		checkMissing(t, s, slugA, "c2")  // only in another workspace
		checkMissing(t, s, slugA, "C1")  // ids are not folded
		checkMissing(t, s, slugA, "c")   // a prefix of an id
		checkMissing(t, s, slugA, "c10") // an extension of an id
		checkMissing(t, s, slugA, "")
		checkMissing(t, s, slugC, "c1")
	})

	t.Run("Replace", func(t *testing.T) {
		s := setup(t)
		changed := store.OAuthClient{
			ID:           "c1",
			Name:         "renamed",
			Public:       true,
			RedirectURIs: []string{"https://other.example.com/cb"},
			GrantTypes:   []string{"authorization_code"},
			CreatedAt:    at(50),
		}
		put(t, s, slugA, changed)
		checkClient(t, s, slugA, changed)
		checkList(t, s, slugA, []store.OAuthClient{changed, oauthClient("c3", 3)})
		// And back: every field written again.
		put(t, s, slugA, oauthClient("c1", 1))
		checkClient(t, s, slugA, oauthClient("c1", 1))
	})

	t.Run("Isolation", func(t *testing.T) {
		// One id in two workspaces names two clients.
		s := setup(t)
		other := publicClient("c1", 9)
		put(t, s, slugB, other)
		checkClient(t, s, slugA, oauthClient("c1", 1))
		checkClient(t, s, slugB, other)
		update(t, s, func(tx store.Tx) error { return tx.DeleteOAuthClient(slugB, "c1") })
		checkMissing(t, s, slugB, "c1")
		checkClient(t, s, slugA, oauthClient("c1", 1))
		checkList(t, s, slugA, []store.OAuthClient{oauthClient("c1", 1), oauthClient("c3", 3)})
		checkList(t, s, slugB, []store.OAuthClient{publicClient("c2", 2)})
	})

	t.Run("Delete", func(t *testing.T) {
		s := setup(t)
		update(t, s, func(tx store.Tx) error { return tx.DeleteOAuthClient(slugA, "c1") })
		checkMissing(t, s, slugA, "c1")
		checkList(t, s, slugA, []store.OAuthClient{oauthClient("c3", 3)})
		checkList(t, s, slugB, []store.OAuthClient{publicClient("c2", 2)})
		for _, c := range []struct{ slug, id string }{{slugA, "c1"}, {slugA, "c4"}, {slugA, "c2"}, {slugA, ""}, {slugC, "c3"}} {
			var err error
			update(t, s, func(tx store.Tx) error {
				err = tx.DeleteOAuthClient(c.slug, c.id)
				return nil // commit: the refused delete must have changed nothing
			})
			checkErr(t, fmt.Sprintf("DeleteOAuthClient(%q, %q)", c.slug, c.id), err, store.ErrNotFound)
		}
		checkList(t, s, slugA, []store.OAuthClient{oauthClient("c3", 3)})
		checkList(t, s, slugB, []store.OAuthClient{publicClient("c2", 2)})
		// A deleted id may be put again.
		put(t, s, slugA, publicClient("c1", 7))
		checkList(t, s, slugA, []store.OAuthClient{publicClient("c1", 7), oauthClient("c3", 3)})
	})

	t.Run("WorkspaceMustExist", func(t *testing.T) {
		s := setup(t)
		var errs [4]error
		update(t, s, func(tx store.Tx) error {
			errs[0] = tx.PutOAuthClient(slugMissing, oauthClient("c9", 9))
			_, errs[1] = tx.OAuthClient(slugMissing, "c1")
			_, errs[2] = tx.OAuthClients(slugMissing)
			errs[3] = tx.DeleteOAuthClient(slugMissing, "c1")
			return nil // commit: the refused calls must have written nothing
		})
		for i, name := range []string{"PutOAuthClient", "OAuthClient", "OAuthClients", "DeleteOAuthClient"} {
			checkErr(t, name+" in a missing workspace", errs[i], store.ErrNotFound)
		}
		checkMissing(t, s, slugA, "c9")
		checkList(t, s, slugA, []store.OAuthClient{oauthClient("c1", 1), oauthClient("c3", 3)})
		checkList(t, s, slugB, []store.OAuthClient{publicClient("c2", 2)})
		checkList(t, s, slugC, nil)
	})

	t.Run("EmptyIDRefused", func(t *testing.T) {
		s := setup(t)
		var err error
		update(t, s, func(tx store.Tx) error {
			err = tx.PutOAuthClient(slugC, oauthClient("", 1))
			return nil // commit: the refused put must have written nothing
		})
		if err == nil {
			t.Errorf("PutOAuthClient with an empty id succeeded, want an error")
		}
		checkMissing(t, s, slugC, "")
		checkList(t, s, slugC, nil)
	})

	t.Run("Rollback", func(t *testing.T) {
		s := setup(t)
		err := s.Update(t.Context(), func(tx store.Tx) error {
			if err := tx.PutOAuthClient(slugA, oauthClient("c5", 5)); err != nil {
				return err
			}
			if err := tx.PutOAuthClient(slugA, publicClient("c3", 30)); err != nil {
				return err
			}
			if err := tx.DeleteOAuthClient(slugA, "c1"); err != nil {
				return err
			}
			return errBoom
		})
		checkErr(t, "Update", err, errBoom)
		checkMissing(t, s, slugA, "c5")
		checkList(t, s, slugA, []store.OAuthClient{oauthClient("c1", 1), oauthClient("c3", 3)})
	})

	t.Run("Copies", func(t *testing.T) {
		s := setup(t)
		c := oauthClient("c5", 5)
		put(t, s, slugA, c)
		c.RedirectURIs[0] = "changed"
		c.PostLogoutRedirectURIs[0] = "changed"
		c.GrantTypes[0] = "changed"
		c.SecretHash[0] = 'X'
		var got store.OAuthClient
		view(t, s, func(tx store.Tx) error {
			var err error
			got, err = tx.OAuthClient(slugA, "c5")
			return err
		})
		if diff := cmp.Diff(oauthClient("c5", 5), got); diff != "" {
			t.Fatalf("OAuthClient after the caller changed its slices (-want +got):\n%s", diff)
		}
		got.RedirectURIs[1] = "changed"
		got.GrantTypes[1] = "changed"
		got.SecretHash[1] = 'Y'
		for _, l := range list(t, s, slugA) {
			l.RedirectURIs[0] = "changed"
			l.PostLogoutRedirectURIs[0] = "changed"
			l.GrantTypes[2] = "changed"
			l.SecretHash[2] = 'Z'
		}
		checkClient(t, s, slugA, oauthClient("c5", 5))
		checkList(t, s, slugA, []store.OAuthClient{oauthClient("c1", 1), oauthClient("c3", 3), oauthClient("c5", 5)})
	})
}
