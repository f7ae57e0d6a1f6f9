package identity_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/internal/testutil"
	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/boltstore"
	"github.com/identitylib/identity/store/memstore"
)

// newFakeClock returns a fake clock at a fixed instant with microseconds,
// as stores keep times.
func newFakeClock() *testutil.Clock {
	return testutil.NewClock(time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC))
}

// cheapArgon2 keeps password hashing fast in tests.
var cheapArgon2 = identity.Argon2Params{Memory: 64, Time: 1, Threads: 1}

// testStores returns a fresh store of each kind, closed when the test ends.
func testStores(t *testing.T) map[string]store.Store {
	t.Helper()
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "id.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	return map[string]store.Store{"memstore": memstore.New(), "boltstore": bolt}
}

// newWorkspace returns workspace "acme" of a Service over st with the fake
// clock (a new one when clock is nil) and cheap hashing.
func newWorkspace(t *testing.T, st store.Store, clock *testutil.Clock, opts *identity.Options) (*identity.Service, *identity.Workspace) {
	t.Helper()
	if clock == nil {
		clock = newFakeClock()
	}
	if opts == nil {
		opts = &identity.Options{}
	}
	opts.Now, opts.PasswordHashing = clock.Now, &cheapArgon2
	svc, err := identity.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.CreateWorkspace(t.Context(), "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	return svc, ws
}

func mustCreateUser(t *testing.T, ws *identity.Workspace, name string) identity.User {
	t.Helper()
	u, err := ws.CreateUser(t.Context(), identity.NewUser{
		Username: name, Email: name + "@example.com", FullName: "User " + name, Password: "correct horse " + name,
	})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustGetUser(t *testing.T, ws *identity.Workspace, id int64) identity.User {
	t.Helper()
	u, err := ws.GetUser(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// wantErrCode fails the test unless err has the code ("" for nil) and
// matches the code's sentinel.
func wantErrCode(t *testing.T, err error, code identity.Code) {
	t.Helper()
	if got := identity.ErrorCode(err); got != code {
		t.Fatalf("error code %q (err %v), want %q", got, err, code)
	}
	if code != "" && !errorsIs(err, code) {
		t.Fatalf("errors.Is(%v, the sentinel of %q) = false", err, code)
	}
}

func errorsIs(err error, code identity.Code) bool {
	sentinels := map[identity.Code]error{
		identity.CodeInvalid: identity.ErrInvalid, identity.CodeNotFound: identity.ErrNotFound,
		identity.CodeConflict: identity.ErrConflict, identity.CodeInternal: identity.ErrInternal,
		identity.CodePreconditionFailed:   identity.ErrPreconditionFailed,
		identity.CodeIdempotencyKeyReused: identity.ErrIdempotencyKeyReused,
		identity.CodeIdempotencyKeyInUse:  identity.ErrIdempotencyKeyInUse,
	}
	s, ok := sentinels[code]
	return ok && errors.Is(err, s)
}

// TestVersionChangesOnEveryWrite: every write of a user, a claim mapper or
// a webhook endpoint gives it a new version, in both stores; reads return
// the version the write returned; a no-op and writes beside the record
// (roles) leave it as it was. An attribute is part of the user: setting
// one to a new value, or deleting it, changes the version; setting it to
// the value it has does not.
func TestVersionChangesOnEveryWrite(t *testing.T) {
	for name, st := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			_, ws := newWorkspace(t, st, nil, nil)
			u := mustCreateUser(t, ws, "ada")
			if u.Version <= 0 {
				t.Fatalf("created user has version %d, want a positive one", u.Version)
			}
			if got := mustGetUser(t, ws, u.ID).Version; got != u.Version {
				t.Fatalf("GetUser version %d, CreateUser returned %d", got, u.Version)
			}
			// A second Service with other hashing parameters rehashes at
			// login: a write of the record, so a new version.
			raised := identity.Argon2Params{Memory: 128, Time: 1, Threads: 1}
			svc2, err := identity.New(st, &identity.Options{PasswordHashing: &raised})
			if err != nil {
				t.Fatal(err)
			}
			ws2, err := svc2.GetWorkspace(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			role, err := ws.CreateRole(ctx, identity.NewRole{Name: "admin"})
			if err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				name    string
				write   func() error
				changes bool
			}{
				{"UpdateUser", func() error {
					_, err := ws.UpdateUser(ctx, u.ID, identity.UserUpdate{Email: "ada@lovelace.org", FullName: "Ada"})
					return err
				}, true},
				{"DisableUser", func() error { return ws.DisableUser(ctx, u.ID) }, true},
				{"DisableUser again (no-op)", func() error { return ws.DisableUser(ctx, u.ID) }, false},
				{"EnableUser", func() error { return ws.EnableUser(ctx, u.ID) }, true},
				{"EnableUser again (no-op)", func() error { return ws.EnableUser(ctx, u.ID) }, false},
				{"SetPassword", func() error { return ws.SetPassword(ctx, u.ID, "a new passphrase") }, true},
				{"rehash at login", func() error { _, err := ws2.Authenticate(ctx, "ada", "a new passphrase"); return err }, true},
				{"login without rehash", func() error { _, err := ws2.Authenticate(ctx, "ada", "a new passphrase"); return err }, false},
				{"SetAttribute", func() error { return errOf(ws.SetAttribute(ctx, u.ID, "dept", "math", nil)) }, true},
				{"SetAttribute to its value (no-op)", func() error { return errOf(ws.SetAttribute(ctx, u.ID, "dept", "math", nil)) }, false},
				{"SetAttribute to another value", func() error { return errOf(ws.SetAttribute(ctx, u.ID, "dept", "logic", nil)) }, true},
				{"DeleteAttribute", func() error { return errOf(ws.DeleteAttribute(ctx, u.ID, "dept", nil)) }, true},
				{"AssignRole", func() error { return ws.AssignRole(ctx, u.ID, role.ID) }, false},
			}
			seen := map[int64]bool{u.Version: true}
			prev := u.Version
			for _, tt := range tests {
				if err := tt.write(); err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				got := mustGetUser(t, ws, u.ID).Version
				switch {
				case tt.changes && (got == prev || seen[got]):
					t.Errorf("%s: version %d, want a new one (before: %d)", tt.name, got, prev)
				case !tt.changes && got != prev:
					t.Errorf("%s: version %d, want it unchanged (%d)", tt.name, got, prev)
				}
				seen[got], prev = true, got
			}

			imported, err := ws.ImportUsers(ctx, []identity.ImportedUser{{Username: "bob", Email: "bob@example.com", FullName: "Bob"}})
			if err != nil {
				t.Fatal(err)
			}
			if imported[0].Version <= 0 || mustGetUser(t, ws, imported[0].ID).Version != imported[0].Version {
				t.Errorf("imported user version %d, stored %d; want the same positive one",
					imported[0].Version, mustGetUser(t, ws, imported[0].ID).Version)
			}

			m1, err := ws.SetClaimMapper(ctx, "dept", identity.ClaimMapperSpec{ClaimName: "department"})
			if err != nil {
				t.Fatal(err)
			}
			m2, err := ws.SetClaimMapper(ctx, "dept", identity.ClaimMapperSpec{ClaimName: "department"})
			if err != nil {
				t.Fatal(err)
			}
			if m1.Version <= 0 || m2.Version <= 0 || m1.Version == m2.Version {
				t.Errorf("mapper versions %d then %d: want two different positive ones", m1.Version, m2.Version)
			}
			got, err := ws.GetClaimMapper(ctx, "dept")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(m2, got); diff != "" {
				t.Errorf("ClaimMapper mismatch (-want +got):\n%s", diff)
			}
			list, err := ws.ListClaimMappers(ctx)
			if err != nil || len(list) != 1 || list[0].Version != m2.Version {
				t.Errorf("ClaimMappers = %+v, %v; want the mapper at version %d", list, err, m2.Version)
			}

			hook, err := ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://hooks.example.com/a", Events: []string{"user.created"}})
			if err != nil {
				t.Fatal(err)
			}
			stored, err := ws.GetWebhook(ctx, hook.Endpoint.ID)
			if err != nil {
				t.Fatal(err)
			}
			if hook.Endpoint.Version <= 0 || stored.Version != hook.Endpoint.Version {
				t.Errorf("webhook version %d, stored %d; want the same positive one", hook.Endpoint.Version, stored.Version)
			}
		})
	}
}

// TestLegacyRecordsHaveVersionZero: a record written without a version
// (as before versions existed) reads as version 0, and IfVersion(0)
// updates it.
func TestLegacyRecordsHaveVersionZero(t *testing.T) {
	st := memstore.New()
	_, ws := newWorkspace(t, st, nil, nil)
	u := mustCreateUser(t, ws, "ada")
	err := st.Update(t.Context(), func(tx store.Tx) error {
		rec, err := tx.User("acme", u.ID)
		if err != nil {
			return err
		}
		rec.Version = 0
		return tx.PutUser("acme", rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustGetUser(t, ws, u.ID).Version; got != 0 {
		t.Fatalf("version %d, want 0", got)
	}
	updated, err := ws.UpdateUser(t.Context(), u.ID, identity.UserUpdate{Email: u.Email, FullName: "Ada", Precondition: identity.IfVersion(0)})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Version == 0 {
		t.Error("the update left version 0")
	}
}

// TestUpdateUserPrecondition: a conditional update happens only when its
// precondition holds; otherwise it fails with CodePreconditionFailed and
// the stored user is as it was.
func TestUpdateUserPrecondition(t *testing.T) {
	tests := []struct {
		name string
		// pre builds the precondition from the current and a stale version.
		pre  func(cur, stale int64) *identity.Precondition
		want identity.Code
	}{
		{"none", func(cur, stale int64) *identity.Precondition { return nil }, ""},
		{"current version", func(cur, stale int64) *identity.Precondition { return identity.IfVersion(cur) }, ""},
		{"stale version", func(cur, stale int64) *identity.Precondition { return identity.IfVersion(stale) }, identity.CodePreconditionFailed},
		{"one of several", func(cur, stale int64) *identity.Precondition {
			return &identity.Precondition{Versions: []int64{stale, cur}}
		}, ""},
		{"exists", func(cur, stale int64) *identity.Precondition { return &identity.Precondition{Exists: true} }, ""},
		{"absent", func(cur, stale int64) *identity.Precondition { return &identity.Precondition{Absent: true} }, identity.CodePreconditionFailed},
		{"not the current version", func(cur, stale int64) *identity.Precondition {
			return &identity.Precondition{NotVersions: []int64{cur}}
		}, identity.CodePreconditionFailed},
		{"not a stale version", func(cur, stale int64) *identity.Precondition {
			return &identity.Precondition{NotVersions: []int64{stale}}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ws := newWorkspace(t, memstore.New(), nil, nil)
			u := mustCreateUser(t, ws, "ada")
			stale := u.Version
			if err := ws.DisableUser(t.Context(), u.ID); err != nil {
				t.Fatal(err)
			}
			before := mustGetUser(t, ws, u.ID)
			got, err := ws.UpdateUser(t.Context(), u.ID, identity.UserUpdate{
				Email: "ada@lovelace.org", FullName: "Countess", Precondition: tt.pre(before.Version, stale),
			})
			wantErrCode(t, err, tt.want)
			after := mustGetUser(t, ws, u.ID)
			if tt.want != "" {
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("a refused update changed the user (-before +after):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(got, after); diff != "" {
				t.Errorf("stored user differs from the returned one (-returned +stored):\n%s", diff)
			}
			if after.Email != "ada@lovelace.org" || after.Version == before.Version {
				t.Errorf("after the update: %+v; want the new email and a new version", after)
			}
		})
	}
	t.Run("missing user is not found", func(t *testing.T) {
		_, ws := newWorkspace(t, memstore.New(), nil, nil)
		_, err := ws.UpdateUser(t.Context(), 42, identity.UserUpdate{Email: "x@example.com", FullName: "X", Precondition: identity.IfVersion(1)})
		wantErrCode(t, err, identity.CodeNotFound)
	})
}

// TestAttributePrecondition: SetAttribute and DeleteAttribute take a
// precondition on the user's version, checked in their transaction: a
// write happens only when it holds, and returns the user as it left it;
// otherwise CodePreconditionFailed and nothing changed. Setting an
// attribute to its value checks it too. A missing user is CodeNotFound
// before the precondition, a missing attribute after it.
func TestAttributePrecondition(t *testing.T) {
	writes := []struct {
		name  string
		write func(ws *identity.Workspace, userID int64, pre *identity.Precondition) (identity.User, error)
		// attrs are the user's attributes after the write, which starts
		// from dept=math.
		attrs map[string]string
	}{
		{"set", func(ws *identity.Workspace, id int64, pre *identity.Precondition) (identity.User, error) {
			return ws.SetAttribute(t.Context(), id, "dept", "logic", pre)
		}, map[string]string{"dept": "logic"}},
		{"set to its value", func(ws *identity.Workspace, id int64, pre *identity.Precondition) (identity.User, error) {
			return ws.SetAttribute(t.Context(), id, "dept", "math", pre)
		}, map[string]string{"dept": "math"}},
		{"delete", func(ws *identity.Workspace, id int64, pre *identity.Precondition) (identity.User, error) {
			return ws.DeleteAttribute(t.Context(), id, "dept", pre)
		}, map[string]string{}},
	}
	pres := []struct {
		name string
		pre  func(cur, stale int64) *identity.Precondition
		want identity.Code
	}{
		{"none", func(cur, stale int64) *identity.Precondition { return nil }, ""},
		{"current version", func(cur, stale int64) *identity.Precondition { return identity.IfVersion(cur) }, ""},
		{"stale version", func(cur, stale int64) *identity.Precondition { return identity.IfVersion(stale) }, identity.CodePreconditionFailed},
		{"exists", func(cur, stale int64) *identity.Precondition { return &identity.Precondition{Exists: true} }, ""},
		{"absent", func(cur, stale int64) *identity.Precondition { return &identity.Precondition{Absent: true} }, identity.CodePreconditionFailed},
		{"not the current version", func(cur, stale int64) *identity.Precondition {
			return &identity.Precondition{NotVersions: []int64{cur}}
		}, identity.CodePreconditionFailed},
	}
	for _, w := range writes {
		for _, tt := range pres {
			t.Run(w.name+", "+tt.name, func(t *testing.T) {
				_, ws := newWorkspace(t, memstore.New(), nil, nil)
				u := mustCreateUser(t, ws, "ada")
				stale := u.Version
				if _, err := ws.SetAttribute(t.Context(), u.ID, "dept", "math", nil); err != nil {
					t.Fatal(err)
				}
				before := mustGetUser(t, ws, u.ID)
				got, err := w.write(ws, u.ID, tt.pre(before.Version, stale))
				wantErrCode(t, err, tt.want)
				after := mustGetUser(t, ws, u.ID)
				attrs, lerr := ws.ListAttributes(t.Context(), u.ID)
				if lerr != nil {
					t.Fatal(lerr)
				}
				if tt.want != "" {
					if diff := cmp.Diff(before, after); diff != "" {
						t.Errorf("a refused write changed the user (-before +after):\n%s", diff)
					}
					if diff := cmp.Diff(map[string]string{"dept": "math"}, attrs); diff != "" {
						t.Errorf("a refused write changed the attributes (-want +got):\n%s", diff)
					}
					return
				}
				if diff := cmp.Diff(after, got); diff != "" {
					t.Errorf("the user returned differs from the stored one (-stored +returned):\n%s", diff)
				}
				if diff := cmp.Diff(w.attrs, attrs); diff != "" {
					t.Errorf("attributes (-want +got):\n%s", diff)
				}
			})
		}
	}
	t.Run("missing user, then the precondition, then a missing attribute", func(t *testing.T) {
		_, ws := newWorkspace(t, memstore.New(), nil, nil)
		u := mustCreateUser(t, ws, "ada")
		_, err := ws.SetAttribute(t.Context(), 42, "k", "v", &identity.Precondition{Absent: true})
		wantErrCode(t, err, identity.CodeNotFound)
		_, err = ws.DeleteAttribute(t.Context(), 42, "k", &identity.Precondition{Absent: true})
		wantErrCode(t, err, identity.CodeNotFound)
		_, err = ws.DeleteAttribute(t.Context(), u.ID, "nosuch", identity.IfVersion(u.Version+1))
		wantErrCode(t, err, identity.CodePreconditionFailed)
		_, err = ws.DeleteAttribute(t.Context(), u.ID, "nosuch", identity.IfVersion(u.Version))
		wantErrCode(t, err, identity.CodeNotFound)
	})
}

// TestPutClaimMapperPrecondition: update-only, create-only and
// version-matching puts, on a missing and an existing mapper.
func TestPutClaimMapperPrecondition(t *testing.T) {
	const stale, current = "stale", "current"
	tests := []struct {
		name     string
		existing bool
		pre      func(versions map[string]int64) *identity.Precondition
		want     identity.Code
	}{
		{"create only, missing", false, func(map[string]int64) *identity.Precondition { return &identity.Precondition{Absent: true} }, ""},
		{"create only, existing", true, func(map[string]int64) *identity.Precondition { return &identity.Precondition{Absent: true} }, identity.CodePreconditionFailed},
		{"update only, missing", false, func(map[string]int64) *identity.Precondition { return &identity.Precondition{Exists: true} }, identity.CodePreconditionFailed},
		{"update only, existing", true, func(map[string]int64) *identity.Precondition { return &identity.Precondition{Exists: true} }, ""},
		{"current version", true, func(v map[string]int64) *identity.Precondition { return identity.IfVersion(v[current]) }, ""},
		{"stale version", true, func(v map[string]int64) *identity.Precondition { return identity.IfVersion(v[stale]) }, identity.CodePreconditionFailed},
		{"a version, missing", false, func(map[string]int64) *identity.Precondition { return identity.IfVersion(0) }, identity.CodePreconditionFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			_, ws := newWorkspace(t, memstore.New(), nil, nil)
			versions := map[string]int64{}
			if tt.existing {
				m, err := ws.SetClaimMapper(ctx, "dept", identity.ClaimMapperSpec{ClaimName: "dept-old"})
				if err != nil {
					t.Fatal(err)
				}
				versions[stale] = m.Version
				if m, err = ws.SetClaimMapper(ctx, "dept", identity.ClaimMapperSpec{ClaimName: "department"}); err != nil {
					t.Fatal(err)
				}
				versions[current] = m.Version
			}
			before, err := ws.ListClaimMappers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ws.SetClaimMapper(ctx, "dept", identity.ClaimMapperSpec{ClaimName: "dept-new", Precondition: tt.pre(versions)})
			wantErrCode(t, err, tt.want)
			after, err := ws.ListClaimMappers(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != "" {
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("a refused put changed the mappers (-before +after):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff([]identity.ClaimMapper{got}, after); diff != "" {
				t.Errorf("mappers after the put (-returned +stored):\n%s", diff)
			}
		})
	}
}

// TestConditionalUpdatesRace: writers that all read the same version and
// update with it: exactly one succeeds, and the stored user is its write.
func TestConditionalUpdatesRace(t *testing.T) {
	for name, st := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			_, ws := newWorkspace(t, st, nil, nil)
			u := mustCreateUser(t, ws, "ada")
			const writers = 8
			results := make([]error, writers)
			updated := make([]identity.User, writers)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Go(func() {
					updated[i], results[i] = ws.UpdateUser(context.Background(), u.ID, identity.UserUpdate{
						Email: u.Email, FullName: "Writer " + string(rune('A'+i)), Precondition: identity.IfVersion(u.Version),
					})
				})
			}
			wg.Wait()
			var winners []identity.User
			for i, err := range results {
				switch identity.ErrorCode(err) {
				case "":
					winners = append(winners, updated[i])
				case identity.CodePreconditionFailed:
				default:
					t.Errorf("writer %d: %v", i, err)
				}
			}
			if len(winners) != 1 {
				t.Fatalf("%d updates succeeded, want exactly 1", len(winners))
			}
			if diff := cmp.Diff(winners[0], mustGetUser(t, ws, u.ID)); diff != "" {
				t.Errorf("stored user is not the winner's write (-winner +stored):\n%s", diff)
			}
		})
	}
}
