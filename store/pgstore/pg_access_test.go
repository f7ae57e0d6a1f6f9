package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/identitylib/identity/store"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// migrationsUpTo returns the embedded migrations numbered up to last.
func migrationsUpTo(t *testing.T, last int) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	entries, err := fs.ReadDir(pgstore.MigrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "%04d_", &n); err != nil || n > last {
			continue
		}
		data, err := fs.ReadFile(pgstore.MigrationFiles, "migrations/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		out["migrations/"+e.Name()] = &fstest.MapFile{Data: data}
	}
	if len(out) != last {
		t.Fatalf("%d migrations up to %04d, want %d", len(out), last, last)
	}
	return out
}

// TestUpgradeToRoleRecords brings a schema of migration 0010, whose roles
// are ids assigned to users, up to date with Open, and checks that every
// role id assigned in a workspace has become a role record, that the
// roles sequence goes on past the largest, that the holders and their
// totals are the assignments, and that the OAuth clients have no claims.
func TestUpgradeToRoleRecords(t *testing.T) {
	url := pgtest.URL(t)
	conn := connect(t, url)
	if _, err := pgstore.Migrate(t.Context(), conn, migrationsUpTo(t, 10)); err != nil {
		t.Fatalf("Migrate to migration 0010: %v", err)
	}
	// acme: users 1 to 3, roles 3 and 7 assigned, a roles sequence that
	// an older release drew from up to 5; beta: role 12 assigned, no
	// sequence; gamma: no role at all; an OAuth client of acme.
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO workspaces (slug, created_at, settings) VALUES ('acme', $1, ''), ('beta', $1, ''), ('gamma', $1, '')", []any{t0}},
		{`INSERT INTO users (workspace, id, username, email, full_name, username_fold, email_fold, full_name_fold,
				email_verified, enabled, mfa_enabled, password_hash, created_at, updated_at, version)
			SELECT w, id, 'u' || id, 'u' || id || '@example.com', 'U', 'u' || id, 'u' || id || '@example.com', 'u',
				false, true, false, '', $1, $1, 1
			FROM (VALUES ('acme', 1), ('acme', 2), ('acme', 3), ('beta', 1)) AS v (w, id)`, []any{t0}},
		{"INSERT INTO user_roles (workspace, user_id, role_id) VALUES ('acme', 1, 3), ('acme', 1, 7), ('acme', 2, 7), ('beta', 1, 12)", nil},
		{"INSERT INTO sequences (workspace, name, value) VALUES ('acme', 'roles', 5), ('acme', 'users', 3)", nil},
		{`INSERT INTO oauth_clients (workspace, id, name, public, redirect_uris, post_logout_redirect_uris, grant_types,
				secret_hash, created_at)
			VALUES ('acme', 'app', 'App', true, '{https://app.example.com/cb}', '{}', '{authorization_code}', '', $1)`, []any{t0}},
	} {
		if _, err := conn.Exec(t.Context(), stmt.sql, stmt.args...); err != nil {
			t.Fatalf("%s: %v", stmt.sql, err)
		}
	}

	before := time.Now().Add(-time.Second)
	s, err := pgstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	after := time.Now().Add(time.Second)

	type holders struct {
		IDs   []int64
		Total int
	}
	var roles []store.Role
	got := map[string]holders{}
	err = s.View(t.Context(), func(tx store.Tx) error {
		var err error
		if roles, _, err = tx.Roles("acme", store.NameQuery{Limit: 10}); err != nil {
			return err
		}
		beta, _, err := tx.Roles("beta", store.NameQuery{Limit: 10})
		if err != nil {
			return err
		}
		roles = append(roles, beta...)
		for _, h := range []struct {
			slug string
			role int64
		}{{"acme", 3}, {"acme", 7}, {"beta", 12}, {"gamma", 3}} {
			ids, total, err := tx.RoleHolders(h.slug, h.role, 0, 10)
			if err != nil {
				return err
			}
			got[fmt.Sprintf("%s/%d", h.slug, h.role)] = holders{ids, total}
		}
		if id, err := tx.RoleIDByName("acme", "ROLE-7"); err != nil || id != 7 {
			t.Errorf("RoleIDByName(ROLE-7) = %d, %v; want 7", id, err)
		}
		client, err := tx.OAuthClient("acme", "app")
		if err == nil && client.Claims != nil {
			t.Errorf("the claims of a client of the older schema = %q, want none", client.Claims)
		}
		return err
	})
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	if len(roles) != 3 {
		t.Fatalf("roles after the upgrade: %+v, want 3", roles)
	}
	upgraded := roles[0].CreatedAt
	if upgraded.Before(before) || upgraded.After(after) || upgraded.Location() != time.UTC || upgraded.Nanosecond()%1000 != 0 {
		t.Errorf("the roles were created at %v, want the time of the upgrade, in UTC, to the microsecond", upgraded)
	}
	record := func(id int64) store.Role {
		return store.Role{ID: id, Name: fmt.Sprintf("role-%d", id), CreatedAt: upgraded, UpdatedAt: upgraded, Version: 1}
	}
	if diff := cmp.Diff([]store.Role{record(3), record(7), record(12)}, roles); diff != "" {
		t.Errorf("role records after the upgrade (-want +got):\n%s", diff)
	}
	wantHolders := map[string]holders{
		"acme/3": {[]int64{1}, 1}, "acme/7": {[]int64{1, 2}, 2}, "beta/12": {[]int64{1}, 1}, "gamma/3": {nil, 0},
	}
	if diff := cmp.Diff(wantHolders, got); diff != "" {
		t.Errorf("holders after the upgrade (-want +got):\n%s", diff)
	}

	// The sequences go on past the largest role id of each workspace, and
	// the store keeps the holders from there.
	next := map[string]int64{}
	update(t, s, func(tx store.Tx) error {
		for _, slug := range []string{"acme", "beta", "gamma"} {
			id, err := tx.NextID(slug, store.SeqRoles)
			if err != nil {
				return err
			}
			next[slug] = id
		}
		if err := tx.RemoveUserRole("acme", 2, 7); err != nil {
			return err
		}
		return tx.AddUserRole("acme", 3, 7)
	})
	if diff := cmp.Diff(map[string]int64{"acme": 8, "beta": 13, "gamma": 1}, next); diff != "" {
		t.Errorf("NextID(SeqRoles) after the upgrade (-want +got):\n%s", diff)
	}
	err = s.View(t.Context(), func(tx store.Tx) error {
		ids, total, err := tx.RoleHolders("acme", 7, 0, 10)
		if err == nil && (!cmp.Equal(ids, []int64{1, 3}) || total != 2) {
			err = fmt.Errorf("RoleHolders(7) after the changes = %v, total %d; want [1 3], 2", ids, total)
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
	checkAccessIndexes(t, conn)
}

// checkAccessIndexes checks, in the schema of conn, that role_holders
// holds exactly the reasons to hold each role (a direct assignment, and
// each group of the user that carries the role) and that the counts are
// the rows of role_holders and group_members.
func checkAccessIndexes(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	for _, c := range []struct{ what, sql string }{
		{"holders and their reasons", `WITH reasons AS (
			SELECT workspace, role_id, user_id, count(*) AS refs FROM (
				SELECT workspace, role_id, user_id FROM user_roles
				UNION ALL
				SELECT m.workspace, r.role_id, m.user_id FROM group_members m
				JOIN group_roles r ON r.workspace = m.workspace AND r.group_id = m.group_id
			) AS a GROUP BY workspace, role_id, user_id
		)
		SELECT format('%s role %s user %s: refs %s, reasons %s', workspace, role_id, user_id, h.refs, r.refs)
		FROM role_holders h FULL JOIN reasons r USING (workspace, role_id, user_id)
		WHERE h.refs IS DISTINCT FROM r.refs`},
		{"role counts", `WITH counted AS (
			SELECT workspace, role_id, sum(n) AS n FROM role_counts GROUP BY workspace, role_id
		), held AS (
			SELECT workspace, role_id, count(*) AS n FROM role_holders GROUP BY workspace, role_id
		)
		SELECT format('%s role %s: counted %s, held %s', workspace, role_id, c.n, h.n)
		FROM counted c FULL JOIN held h USING (workspace, role_id)
		WHERE coalesce(c.n, 0) <> coalesce(h.n, 0)`},
		{"group counts", `WITH counted AS (
			SELECT workspace, group_id, sum(n) AS n FROM group_counts GROUP BY workspace, group_id
		), members AS (
			SELECT workspace, group_id, count(*) AS n FROM group_members GROUP BY workspace, group_id
		)
		SELECT format('%s group %s: counted %s, members %s', workspace, group_id, c.n, m.n)
		FROM counted c FULL JOIN members m USING (workspace, group_id)
		WHERE coalesce(c.n, 0) <> coalesce(m.n, 0)`},
	} {
		wrong, err := pgx.CollectRows(must(conn.Query(t.Context(), c.sql)), pgx.RowTo[string])
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		for _, w := range wrong {
			t.Errorf("%s: %s", c.what, w)
		}
	}
}

// TestAccessIndexes runs random changes of roles, groups, memberships and
// assignments from concurrent writers, some of which fail and roll back
// (alone, or in a savepoint of a group), and checks that the holders and
// the counts are what the assignments and memberships make them.
func TestAccessIndexes(t *testing.T) {
	url := pgtest.URL(t)
	s, err := pgstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	const users, roles, groups = 12, 4, 4
	update(t, s, func(tx store.Tx) error {
		for _, slug := range []string{"acme", "beta"} {
			if err := tx.PutWorkspace(store.Workspace{Slug: slug, CreatedAt: t0}); err != nil {
				return err
			}
			for id := int64(1); id <= users; id++ {
				u := store.User{ID: id, Username: fmt.Sprintf("u%d", id), Email: fmt.Sprintf("u%d@example.com", id), FullName: "U"}
				if err := tx.PutUser(slug, u); err != nil {
					return err
				}
			}
		}
		return nil
	})
	errRollBack := errors.New("roll back")
	change := func(tx store.Tx, r *rand.Rand) error {
		slug := []string{"acme", "beta"}[r.IntN(2)]
		user, role, group := r.Int64N(users)+1, r.Int64N(roles)+1, r.Int64N(groups)+1
		var err error
		switch r.IntN(12) {
		case 0, 1:
			err = tx.AddUserRole(slug, user, role)
		case 2:
			err = tx.RemoveUserRole(slug, user, role)
		case 3, 4, 5:
			err = tx.AddGroupMember(slug, group, user)
		case 6:
			err = tx.RemoveGroupMember(slug, group, user)
		case 7, 8:
			err = tx.AddGroupRole(slug, group, role)
		case 9:
			err = tx.RemoveGroupRole(slug, group, role)
		case 10:
			if err = tx.DeleteGroup(slug, group); errors.Is(err, store.ErrNotFound) {
				err = nil
			}
			if err == nil {
				err = tx.PutGroup(slug, store.Group{ID: group, Name: fmt.Sprintf("g%d", group), CreatedAt: t0, UpdatedAt: t0})
			}
		case 11:
			if r.IntN(3) == 0 {
				// The user goes, and comes back with the id.
				if err = tx.DeleteUser(slug, user); err == nil {
					err = tx.PutUser(slug, store.User{ID: user, Username: fmt.Sprintf("u%d", user),
						Email: fmt.Sprintf("u%d@example.com", user), FullName: "U"})
				}
				break
			}
			if err = tx.DeleteRole(slug, role); errors.Is(err, store.ErrNotFound) {
				err = nil
			}
			if err == nil {
				err = tx.PutRole(slug, store.Role{ID: role, Name: fmt.Sprintf("r%d", role), CreatedAt: t0, UpdatedAt: t0})
			}
		}
		if errors.Is(err, store.ErrNotFound) {
			err = nil // a removal of what is not there
		}
		if err == nil && r.IntN(8) == 0 {
			err = errRollBack
		}
		return err
	}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := range 100 {
				seed := uint64(w*1000 + i)
				err := s.Update(t.Context(), func(tx store.Tx) error {
					r := rand.New(rand.NewPCG(seed, 7)) // the same changes on every run of fn
					for range 1 + r.IntN(3) {
						if err := change(tx, r); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil && !errors.Is(err, errRollBack) {
					t.Errorf("Update: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	conn := connect(t, url)
	var holders int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM role_holders").Scan(&holders); err != nil || holders == 0 {
		t.Fatalf("role_holders holds %d rows, %v: the changes made no holder", holders, err)
	}
	checkAccessIndexes(t, conn)
	if st := s.Stats(); st.Retries > 0 {
		t.Logf("%d commits, %d retries, %d alone, %d grouped", st.Commits, st.Retries, st.Alone, st.Grouped)
	}
}

// accessFixture writes to s workspace acme with users 1 to 4, roles 1 to
// 3, groups 1 to 3 and what they hold: user 1 holds role 1 directly and
// is in groups 1 (roles 1 and 2) and 2 (no role); user 2 is in group 3,
// which carries role 3, of which there is no record; user 3 holds role 2
// directly; user 4 holds nothing.
func accessFixture(t *testing.T, s store.Store) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		steps := []error{tx.PutWorkspace(store.Workspace{Slug: "acme", CreatedAt: t0})}
		for id := int64(1); id <= 4; id++ {
			steps = append(steps, tx.PutUser("acme", store.User{ID: id, Username: fmt.Sprintf("u%d", id),
				Email: fmt.Sprintf("u%d@example.com", id), FullName: "U"}))
		}
		steps = append(steps,
			tx.PutRole("acme", store.Role{ID: 1, Name: "admin", Description: "all", CreatedAt: t0, UpdatedAt: t0, Version: 4}),
			tx.PutRole("acme", store.Role{ID: 2, Name: "editor", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), Version: 5}),
			tx.PutGroup("acme", store.Group{ID: 1, Name: "eng", Description: "engineers", CreatedAt: t0, UpdatedAt: t0, Version: 6}),
			tx.PutGroup("acme", store.Group{ID: 2, Name: "all", CreatedAt: t0, UpdatedAt: t0, Version: 7}),
			tx.PutGroup("acme", store.Group{ID: 3, Name: "ops", CreatedAt: t0, UpdatedAt: t0, Version: 8}),
			tx.AddUserRole("acme", 1, 1), tx.AddUserRole("acme", 3, 2),
			tx.AddGroupMember("acme", 1, 1), tx.AddGroupMember("acme", 2, 1), tx.AddGroupMember("acme", 3, 2),
			tx.AddGroupRole("acme", 1, 2), tx.AddGroupRole("acme", 1, 1), tx.AddGroupRole("acme", 3, 3),
		)
		return errors.Join(steps...)
	})
}

// TestUserAccessBulk checks that UserAccess reads in one statement what
// the Tx methods read one by one, and its errors.
func TestUserAccessBulk(t *testing.T) {
	s := pgtest.Open(t, nil)
	accessFixture(t, s)
	// perRecord reads what UserAccess reads through the Tx methods,
	// leaving out the groups and roles without records.
	perRecord := func(tx store.Tx, id int64) (store.UserAccess, error) {
		a := store.UserAccess{GroupRoles: map[int64][]int64{}}
		var err error
		if _, err = tx.User("acme", id); err != nil {
			return a, err
		}
		if a.Direct, err = tx.UserRoles("acme", id); err != nil {
			return a, err
		}
		groups, err := tx.UserGroups("acme", id)
		if err != nil {
			return a, err
		}
		roleIDs := map[int64]bool{}
		for _, r := range a.Direct {
			roleIDs[r] = true
		}
		for _, g := range groups {
			rec, err := tx.Group("acme", g)
			if err != nil {
				return a, err
			}
			a.Groups = append(a.Groups, rec)
			roles, err := tx.GroupRoles("acme", g)
			if err != nil {
				return a, err
			}
			if len(roles) > 0 {
				a.GroupRoles[g] = roles
			}
			for _, r := range roles {
				roleIDs[r] = true
			}
		}
		for r := int64(1); r <= 3; r++ {
			if !roleIDs[r] {
				continue
			}
			rec, err := tx.Role("acme", r)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return a, err
			}
			a.Roles = append(a.Roles, rec)
		}
		return a, nil
	}
	err := s.View(t.Context(), func(tx store.Tx) error {
		for id := int64(1); id <= 4; id++ {
			want, err := perRecord(tx, id)
			if err != nil {
				return err
			}
			got, err := tx.(store.Bulk).UserAccess("acme", id)
			if err != nil {
				return fmt.Errorf("UserAccess(%d): %w", id, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("UserAccess(%d) (-per record +bulk):\n%s", id, diff)
			}
		}
		got, err := tx.(store.Bulk).UserAccess("acme", 1)
		want := store.UserAccess{
			Direct: []int64{1},
			Groups: []store.Group{
				{ID: 1, Name: "eng", Description: "engineers", CreatedAt: t0, UpdatedAt: t0, Version: 6},
				{ID: 2, Name: "all", CreatedAt: t0, UpdatedAt: t0, Version: 7},
			},
			GroupRoles: map[int64][]int64{1: {1, 2}},
			Roles: []store.Role{
				{ID: 1, Name: "admin", Description: "all", CreatedAt: t0, UpdatedAt: t0, Version: 4},
				{ID: 2, Name: "editor", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), Version: 5},
			},
		}
		if diff := cmp.Diff(want, got); err != nil || diff != "" {
			t.Errorf("UserAccess(1) = %v (-want +got):\n%s", err, diff)
		}
		for _, c := range []struct {
			slug string
			id   int64
		}{{"acme", 5}, {"nowhere", 1}, {"bad\x00slug", 1}} {
			if _, err := tx.(store.Bulk).UserAccess(c.slug, c.id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("UserAccess(%q, %d): error = %v, want ErrNotFound", c.slug, c.id, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestInsertUsersAccess checks that InsertUsers writes the memberships
// and the holders, and counts them, as AddUserRole and AddGroupMember do
// one by one: two schemas, one written each way, hold the same rows and
// the same totals.
func TestInsertUsersAccess(t *testing.T) {
	inserts := []store.UserInsert{
		{User: store.User{ID: 5, Username: "u5", Email: "u5@example.com", FullName: "U"}, Roles: []int64{2, 1, 2}, Groups: []int64{1, 3, 1}},
		{User: store.User{ID: 6, Username: "u6", Email: "u6@example.com", FullName: "U"}, Groups: []int64{2}},
		{User: store.User{ID: 7, Username: "u7", Email: "u7@example.com", FullName: "U"}, Roles: []int64{3}},
		{User: store.User{ID: 8, Username: "u8", Email: "u8@example.com", FullName: "U"}},
	}
	var dumps [2]map[string][]string
	for i, bulk := range []bool{true, false} {
		url := pgtest.URL(t)
		s, err := pgstore.Open(t.Context(), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		accessFixture(t, s)
		update(t, s, func(tx store.Tx) error {
			if bulk {
				return tx.(store.Bulk).InsertUsers("acme", inserts)
			}
			var steps []error
			for _, in := range inserts {
				steps = append(steps, tx.PutUser("acme", in.User))
				for _, r := range in.Roles {
					steps = append(steps, tx.AddUserRole("acme", in.User.ID, r))
				}
				for _, g := range in.Groups {
					steps = append(steps, tx.AddGroupMember("acme", g, in.User.ID))
				}
			}
			return errors.Join(steps...)
		})
		conn := connect(t, url)
		checkAccessIndexes(t, conn)
		dumps[i] = map[string][]string{}
		for _, q := range []string{
			"SELECT to_jsonb(t)::text FROM user_roles t ORDER BY 1",
			"SELECT to_jsonb(t)::text FROM group_members t ORDER BY 1",
			"SELECT to_jsonb(t)::text FROM role_holders t ORDER BY 1",
			"SELECT format('%s %s', role_id, sum(n)) FROM role_counts GROUP BY role_id ORDER BY 1",
			"SELECT format('%s %s', group_id, sum(n)) FROM group_counts GROUP BY group_id ORDER BY 1",
		} {
			rows, err := pgx.CollectRows(must(conn.Query(t.Context(), q)), pgx.RowTo[string])
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			dumps[i][q] = rows
		}
	}
	if diff := cmp.Diff(dumps[1], dumps[0]); diff != "" {
		t.Errorf("rows of the per-record path (-) and the bulk path (+):\n%s", diff)
	}
	// User 5 holds role 1 directly and through group 1, twice.
	if got := dumps[0]["SELECT to_jsonb(t)::text FROM role_holders t ORDER BY 1"]; !slices.Contains(got,
		`{"refs": 2, "role_id": 1, "user_id": 5, "workspace": "acme"}`) {
		t.Errorf("role_holders after the import: %q, want user 5 holding role 1 for two reasons", got)
	}
}

// TestAccessRoundTrips counts the messages the client sends for the
// reads and writes of roles and groups, once their statements are
// prepared on the connection: each is one round trip, with the BEGIN; a
// write adds the COMMIT.
func TestAccessRoundTrips(t *testing.T) {
	ctx := t.Context()
	s, writes, err := pgstore.OpenCounting(ctx, pgtest.URL(t), &pgstore.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	accessFixture(t, s)
	view := func(fn func(tx store.Tx) error) func() error {
		return func() error { return s.View(ctx, fn) }
	}
	write := func(fn func(tx store.Tx) error) func() error {
		return func() error { return s.Update(ctx, fn) }
	}
	calls := []struct {
		name string
		call func() error
		want int64
	}{
		{"GroupMembers", view(func(tx store.Tx) error { _, _, err := tx.GroupMembers("acme", 1, 0, 20); return err }), 1},
		{"RoleHolders", view(func(tx store.Tx) error { _, _, err := tx.RoleHolders("acme", 1, 0, 20); return err }), 1},
		{"UserGroups", view(func(tx store.Tx) error { _, err := tx.UserGroups("acme", 1); return err }), 1},
		{"GroupRoles", view(func(tx store.Tx) error { _, err := tx.GroupRoles("acme", 1); return err }), 1},
		{"Roles", view(func(tx store.Tx) error {
			_, _, err := tx.Roles("acme", store.NameQuery{Prefix: "ad", Limit: 20})
			return err
		}), 1},
		{"Group", view(func(tx store.Tx) error { _, err := tx.Group("acme", 1); return err }), 1},
		{"UserAccess", view(func(tx store.Tx) error { _, err := tx.(store.Bulk).UserAccess("acme", 1); return err }), 1},
		{"AddGroupMember", write(func(tx store.Tx) error { return tx.AddGroupMember("acme", 3, 4) }), 2},
		{"RemoveGroupMember", write(func(tx store.Tx) error { return tx.RemoveGroupMember("acme", 3, 4) }), 2},
		{"AddUserRole", write(func(tx store.Tx) error { return tx.AddUserRole("acme", 4, 2) }), 2},
		{"RemoveUserRole", write(func(tx store.Tx) error { return tx.RemoveUserRole("acme", 4, 2) }), 2},
		{"AddGroupRole", write(func(tx store.Tx) error { return tx.AddGroupRole("acme", 2, 3) }), 2},
		{"RemoveGroupRole", write(func(tx store.Tx) error { return tx.RemoveGroupRole("acme", 2, 3) }), 2},
		{"PutRole", write(func(tx store.Tx) error {
			return tx.PutRole("acme", store.Role{ID: 9, Name: "temp", CreatedAt: t0, UpdatedAt: t0})
		}), 2},
		// The page's plan setting goes with the BEGIN, its reset with the
		// next statement.
		{"RoleHolders and AddGroupMember", write(func(tx store.Tx) error {
			if _, _, err := tx.RoleHolders("acme", 1, 0, 20); err != nil {
				return err
			}
			return tx.AddGroupMember("acme", 2, 4)
		}), 3},
	}
	// Prepare every statement on the connection.
	for _, c := range calls {
		if err := c.call(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	got, want := map[string]int64{}, map[string]int64{}
	for _, c := range calls {
		before := writes.Load()
		if err := c.call(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got[c.name], want[c.name] = writes.Load()-before, c.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trips per call (-want +got):\n%s", diff)
	}
}

// TestOAuthClientClaims checks that a client's claims are kept.
func TestOAuthClientClaims(t *testing.T) {
	s := withWorkspace(t, nil)
	c := store.OAuthClient{ID: "app", Name: "App", Claims: []string{"roles", "groups"}, CreatedAt: t0}
	update(t, s, func(tx store.Tx) error { return tx.PutOAuthClient("acme", c) })
	err := s.View(context.Background(), func(tx store.Tx) error {
		got, err := tx.OAuthClient("acme", "app")
		if err == nil && !cmp.Equal(got.Claims, c.Claims) {
			err = fmt.Errorf("claims = %q, want %q", got.Claims, c.Claims)
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
	var refused error
	update(t, s, func(tx store.Tx) error {
		refused = tx.PutOAuthClient("acme", store.OAuthClient{ID: "bad", Claims: []string{"a\x00b"}})
		return nil
	})
	if refused == nil {
		t.Error("a claim PostgreSQL text cannot hold was stored")
	}
}
