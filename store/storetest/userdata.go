package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity/store"
)

// testRoles checks UserRoles, AddUserRole and RemoveUserRole.
func testRoles(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	putUsers(t, s, slugA, user(1, "alice", "alice@example.com", "Alice"), user(2, "bob", "bob@example.com", "Bob"))
	putUsers(t, s, slugB, user(1, "alice", "alice@example.com", "Alice"))

	roles := func(t *testing.T, slug string, userID int64) []int64 {
		t.Helper()
		var got []int64
		view(t, s, func(tx store.Tx) error {
			var err error
			got, err = tx.UserRoles(slug, userID)
			return err
		})
		return got
	}
	checkRoles := func(t *testing.T, slug string, userID int64, want []int64) {
		t.Helper()
		if diff := cmp.Diff(want, roles(t, slug, userID), equateEmpty); diff != "" {
			t.Errorf("UserRoles(%q, %d) mismatch (-want +got):\n%s", slug, userID, diff)
		}
	}

	t.Run("NoneAssigned", func(t *testing.T) {
		checkRoles(t, slugA, 1, nil)
	})

	t.Run("AddAscendingAndIdempotent", func(t *testing.T) {
		var errs []error
		update(t, s, func(tx store.Tx) error {
			errs = nil
			for _, r := range []int64{30, 10, 20, 10} {
				errs = append(errs, tx.AddUserRole(slugA, 1, r))
			}
			return nil
		})
		var again error
		update(t, s, func(tx store.Tx) error {
			again = tx.AddUserRole(slugA, 1, 30) // again, in a later transaction
			return nil
		})
		for i, err := range append(errs, again) {
			if err != nil {
				t.Errorf("AddUserRole #%d: %v", i, err)
			}
		}
		update(t, s, func(tx store.Tx) error { return tx.AddUserRole(slugA, 2, 5) })
		checkRoles(t, slugA, 1, []int64{10, 20, 30})
		checkRoles(t, slugA, 2, []int64{5})
		checkRoles(t, slugB, 1, nil)
	})

	t.Run("Remove", func(t *testing.T) {
		var err error
		update(t, s, func(tx store.Tx) error {
			err = tx.RemoveUserRole(slugA, 1, 20)
			return nil
		})
		if err != nil {
			t.Fatalf("RemoveUserRole: %v", err)
		}
		checkRoles(t, slugA, 1, []int64{10, 30})
		checkRoles(t, slugA, 2, []int64{5})
	})

	t.Run("RemoveNotAssigned", func(t *testing.T) {
		for _, c := range []struct {
			slug       string
			user, role int64
			why        string
		}{
			{slugA, 1, 20, "already removed"},
			{slugA, 1, 99, "never assigned"},
			{slugA, 2, 10, "assigned to another user"},
			{slugB, 1, 10, "assigned in another workspace"},
		} {
			var err error
			update(t, s, func(tx store.Tx) error {
				err = tx.RemoveUserRole(c.slug, c.user, c.role)
				return nil
			})
			checkErr(t, fmt.Sprintf("RemoveUserRole(%q, %d, %d) %s", c.slug, c.user, c.role, c.why), err, store.ErrNotFound)
		}
		checkRoles(t, slugA, 1, []int64{10, 30})
		checkRoles(t, slugA, 2, []int64{5})
	})

	t.Run("RemoveAll", func(t *testing.T) {
		update(t, s, func(tx store.Tx) error {
			if err := tx.RemoveUserRole(slugA, 1, 10); err != nil {
				return err
			}
			return tx.RemoveUserRole(slugA, 1, 30)
		})
		checkRoles(t, slugA, 1, nil)
		update(t, s, func(tx store.Tx) error { return tx.AddUserRole(slugA, 1, 7) })
		checkRoles(t, slugA, 1, []int64{7})
	})

	t.Run("Copies", func(t *testing.T) {
		got := roles(t, slugA, 1)
		if len(got) != 1 {
			t.Fatalf("UserRoles = %v, want one role", got)
		}
		got[0] = 1000
		checkRoles(t, slugA, 1, []int64{7})
	})
}

// testAttributes checks UserAttributes, PutUserAttribute and
// DeleteUserAttribute.
func testAttributes(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	putUsers(t, s, slugA, user(1, "alice", "alice@example.com", "Alice"), user(2, "bob", "bob@example.com", "Bob"))
	putUsers(t, s, slugB, user(1, "alice", "alice@example.com", "Alice"))

	attrs := func(t *testing.T, slug string, userID int64) map[string]string {
		t.Helper()
		var got map[string]string
		view(t, s, func(tx store.Tx) error {
			var err error
			got, err = tx.UserAttributes(slug, userID)
			return err
		})
		return got
	}
	checkAttrs := func(t *testing.T, slug string, userID int64, want map[string]string) {
		t.Helper()
		got := attrs(t, slug, userID)
		if got == nil {
			t.Errorf("UserAttributes(%q, %d) = nil map, want a non-nil map", slug, userID)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("UserAttributes(%q, %d) mismatch (-want +got):\n%s", slug, userID, diff)
		}
	}

	t.Run("NoneIsEmptyMap", func(t *testing.T) {
		checkAttrs(t, slugA, 1, map[string]string{})
	})

	want := map[string]string{
		"department":   "R&D",
		"größe":        "1,80 m",
		"部署":           "開発",
		"emoji 🔑":      "🗝️",
		"empty":        "",
		"with\nnl":     "line1\nline2",
		"k":            "a much longer value than the key itself, with punctuation: ;,/?:@&=+$#",
		"Department":   "case matters in keys",
		"dept.sub-key": "dots and dashes",
	}

	t.Run("PutAndRead", func(t *testing.T) {
		update(t, s, func(tx store.Tx) error {
			for k, v := range want {
				if err := tx.PutUserAttribute(slugA, 1, k, v); err != nil {
					return fmt.Errorf("PutUserAttribute(%q): %w", k, err)
				}
			}
			return tx.PutUserAttribute(slugA, 2, "department", "Ops")
		})
		checkAttrs(t, slugA, 1, want)
		checkAttrs(t, slugA, 2, map[string]string{"department": "Ops"})
		checkAttrs(t, slugB, 1, map[string]string{})
	})

	t.Run("Replace", func(t *testing.T) {
		update(t, s, func(tx store.Tx) error {
			if err := tx.PutUserAttribute(slugA, 1, "部署", "営業"); err != nil {
				return err
			}
			return tx.PutUserAttribute(slugA, 1, "empty", "now set")
		})
		want["部署"] = "営業"
		want["empty"] = "now set"
		checkAttrs(t, slugA, 1, want)
		checkAttrs(t, slugA, 2, map[string]string{"department": "Ops"})
	})

	t.Run("Delete", func(t *testing.T) {
		update(t, s, func(tx store.Tx) error {
			if err := tx.DeleteUserAttribute(slugA, 1, "emoji 🔑"); err != nil {
				return err
			}
			return tx.DeleteUserAttribute(slugA, 1, "Department")
		})
		delete(want, "emoji 🔑")
		delete(want, "Department")
		checkAttrs(t, slugA, 1, want)
		checkAttrs(t, slugA, 2, map[string]string{"department": "Ops"})
	})

	t.Run("DeleteMissing", func(t *testing.T) {
		for _, c := range []struct {
			slug string
			user int64
			key  string
			why  string
		}{
			{slugA, 1, "emoji 🔑", "already deleted"},
			{slugA, 1, "nope", "never set"},
			{slugA, 1, "DEPARTMENT", "keys are not folded"},
			{slugA, 2, "k", "set on another user"},
			{slugB, 1, "department", "set in another workspace"},
		} {
			var err error
			update(t, s, func(tx store.Tx) error {
				err = tx.DeleteUserAttribute(c.slug, c.user, c.key)
				return nil
			})
			checkErr(t, fmt.Sprintf("DeleteUserAttribute(%q, %d, %q) %s", c.slug, c.user, c.key, c.why), err, store.ErrNotFound)
		}
		checkAttrs(t, slugA, 1, want)
	})

	t.Run("DeleteAll", func(t *testing.T) {
		update(t, s, func(tx store.Tx) error { return tx.DeleteUserAttribute(slugA, 2, "department") })
		checkAttrs(t, slugA, 2, map[string]string{})
	})

	t.Run("Copies", func(t *testing.T) {
		got := attrs(t, slugA, 1)
		got["k"] = "changed"
		got["added"] = "x"
		delete(got, "department")
		checkAttrs(t, slugA, 1, want)
	})
}

// testClaimMappers checks ClaimMappers, PutClaimMapper and DeleteClaimMapper.
func testClaimMappers(t *testing.T, newStore func(t *testing.T) store.Store) {
	s := newStoreWith(t, newStore, slugA, slugB)
	mappers := func(t *testing.T, slug string) []store.ClaimMapper {
		t.Helper()
		var got []store.ClaimMapper
		view(t, s, func(tx store.Tx) error {
			var err error
			got, err = tx.ClaimMappers(slug)
			return err
		})
		return got
	}
	check := func(t *testing.T, slug string, want []store.ClaimMapper) {
		t.Helper()
		if diff := cmp.Diff(want, mappers(t, slug), equateEmpty); diff != "" {
			t.Errorf("ClaimMappers(%q) mismatch (-want +got):\n%s", slug, diff)
		}
	}
	dept := store.ClaimMapper{AttributeKey: "dept", ClaimName: "department", IncludeInAccess: true, Version: 1 << 40}
	zone := store.ClaimMapper{AttributeKey: "zone", ClaimName: "tz", IncludeInID: true, Version: -3}
	alpha := store.ClaimMapper{AttributeKey: "alpha", ClaimName: "a", IncludeInAccess: true, IncludeInID: true}
	mid := store.ClaimMapper{AttributeKey: "m", ClaimName: "https://example.com/claims/m"}

	t.Run("Empty", func(t *testing.T) {
		check(t, slugA, nil)
	})

	t.Run("Ascending", func(t *testing.T) {
		update(t, s, func(tx store.Tx) error {
			for _, m := range []store.ClaimMapper{zone, dept, alpha} {
				if err := tx.PutClaimMapper(slugA, m); err != nil {
					return err
				}
			}
			return nil
		})
		update(t, s, func(tx store.Tx) error { return tx.PutClaimMapper(slugA, mid) })
		update(t, s, func(tx store.Tx) error { return tx.PutClaimMapper(slugB, zone) })
		check(t, slugA, []store.ClaimMapper{alpha, dept, mid, zone})
		check(t, slugB, []store.ClaimMapper{zone})
	})

	t.Run("Replace", func(t *testing.T) {
		dept2 := store.ClaimMapper{AttributeKey: "dept", ClaimName: "org_unit", IncludeInID: true, Version: 2}
		update(t, s, func(tx store.Tx) error { return tx.PutClaimMapper(slugA, dept2) })
		check(t, slugA, []store.ClaimMapper{alpha, dept2, mid, zone})
		dept = dept2
	})

	t.Run("Delete", func(t *testing.T) {
		update(t, s, func(tx store.Tx) error { return tx.DeleteClaimMapper(slugA, "m") })
		check(t, slugA, []store.ClaimMapper{alpha, dept, zone})
		check(t, slugB, []store.ClaimMapper{zone})
	})

	t.Run("DeleteMissing", func(t *testing.T) {
		for _, c := range []struct{ slug, key string }{
			{slugA, "m"},     // already deleted
			{slugA, "nope"},  // never put
			{slugA, "DEPT"},  // keys are not folded
			{slugB, "alpha"}, // only in another workspace
		} {
			var err error
			update(t, s, func(tx store.Tx) error {
				err = tx.DeleteClaimMapper(c.slug, c.key)
				return nil
			})
			checkErr(t, fmt.Sprintf("DeleteClaimMapper(%q, %q)", c.slug, c.key), err, store.ErrNotFound)
		}
		check(t, slugA, []store.ClaimMapper{alpha, dept, zone})
		check(t, slugB, []store.ClaimMapper{zone})
	})
}
