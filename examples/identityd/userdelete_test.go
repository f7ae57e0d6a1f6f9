package main

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
)

// TestUserDelete: user delete removes the user with everything of it and
// says what it removed; the username is free again; an unknown user or a
// malformed id is an error.
func TestUserDelete(t *testing.T) {
	db, _ := newDB(t)
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		ada, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Password: "correct horse battery"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ws.CreateUser(ctx, identity.NewUser{Username: "bob", Email: "bob@example.com", FullName: "Bob", Password: "correct horse battery"}); err != nil {
			t.Fatal(err)
		}
		role, err := ws.CreateRole(ctx, identity.NewRole{Name: "admin"})
		if err != nil {
			t.Fatal(err)
		}
		var groups []identity.Group
		for _, name := range []string{"eng", "ops", "all"} {
			g, err := ws.CreateGroup(ctx, identity.NewGroup{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			groups = append(groups, g)
		}
		_, errDept := ws.SetAttribute(ctx, ada.ID, "dept", "R&D", nil)
		_, errFloor := ws.SetAttribute(ctx, ada.ID, "floor", "3", nil)
		steps := []error{
			errDept, errFloor,
			ws.AssignRole(ctx, ada.ID, role.ID),
			ws.AddGroupMember(ctx, groups[0].ID, ada.ID), ws.AddGroupMember(ctx, groups[1].ID, ada.ID),
			ws.AddGroupMember(ctx, groups[2].ID, 2),
		}
		_, err = ws.CreateSession(ctx, ada.ID, nil)
		if err := errors.Join(append(steps, err)...); err != nil {
			t.Fatal(err)
		}
	})

	out := mustRun(t, "-db", db, "user", "delete", "-workspace", "acme", "1")
	want := "deleted user 1 (ada, ada@example.com) permanently, with:\n" +
		"  attributes     2\n" +
		"  roles          1\n" +
		"  groups         2\n" +
		"  sessions       1\n" +
		"  grants         0, with their refresh tokens\n" +
		"  second factor  none\n" +
		"  and its authorization codes, verification and reset links, lockout state and queued emails\n"
	if diff := cmp.Diff(want, out.stdout); diff != "" {
		t.Errorf("user delete output (-want +got):\n%s", diff)
	}

	r := runCmd(t, "-db", db, "user", "delete", "-workspace", "acme", "1")
	if r.code != exitError || r.stderr != "identityd: workspace acme has no user 1\n" {
		t.Errorf("user delete of a deleted user: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, id := range []string{"x", "0", "-3"} {
		if r := runCmd(t, "-db", db, "user", "delete", "-workspace", "acme", id); r.code != exitUsage {
			t.Errorf("user delete %s: exit %d, stderr %q; want a usage error", id, r.code, r.stderr)
		}
	}
	if r := runCmd(t, "-db", db, "user", "delete", "2"); r.code != exitUsage {
		t.Errorf("user delete without -workspace: exit %d, want a usage error", r.code)
	}
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		if _, err := ws.GetUser(ctx, 1); !errors.Is(err, identity.ErrNotFound) {
			t.Errorf("GetUser(1) after user delete: %v, want not found", err)
		}
		if _, err := ws.GetUser(ctx, 2); err != nil {
			t.Errorf("bob after ada's deletion: %v", err)
		}
		u, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada Again", Password: "correct horse battery"})
		if err != nil || u.ID != 3 {
			t.Errorf("CreateUser(ada) again = %+v, %v; want user 3", u, err)
		}
	})
}

// TestWorkspaceDelete: workspace delete removes the workspace with
// everything of it and says what it removed; its key no longer works and
// the slug makes an empty workspace again.
func TestWorkspaceDelete(t *testing.T) {
	db, key := newDB(t)
	mustRun(t, "-db", db, "client", "create", "-workspace", "acme", "-redirect-uri", "https://app.example.com/cb")
	inAcme(t, db, func(ctx context.Context, ws *identity.Workspace) {
		for _, name := range []string{"ada", "bob"} {
			if _, err := ws.CreateUser(ctx, identity.NewUser{Username: name, Email: name + "@example.com", FullName: name, Password: "correct horse battery"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://hooks.example.com/x", Events: []string{"user.created"}}); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"admin", "dev", "auditor"} {
			if _, err := ws.CreateRole(ctx, identity.NewRole{Name: name}); err != nil {
				t.Fatal(err)
			}
		}
		g, err := ws.CreateGroup(ctx, identity.NewGroup{Name: "eng"})
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.AddGroupMember(ctx, g.ID, 1); err != nil {
			t.Fatal(err)
		}
	})

	out := mustRun(t, "-db", db, "workspace", "delete", "acme")
	want := "deleted workspace acme permanently, with:\n" +
		"  users     2, with everything of theirs\n" +
		"  roles     3\n" +
		"  groups    1, with their memberships\n" +
		"  webhooks  1, with their deliveries\n" +
		"  api keys  1\n" +
		"  clients   1\n" +
		"  and its settings, claim mappers, signing keys, tokens and queued emails\n"
	if diff := cmp.Diff(want, out.stdout); diff != "" {
		t.Errorf("workspace delete output (-want +got):\n%s", diff)
	}
	if out := mustRun(t, "-db", db, "workspace", "list"); out.stdout != "SLUG  CREATED\n" {
		t.Errorf("workspace list after the deletion:\n%s", out.stdout)
	}
	r := runCmd(t, "-db", db, "workspace", "delete", "acme")
	if r.code != exitError || r.stderr != "identityd: workspace \"acme\" does not exist\n" {
		t.Errorf("workspace delete of a deleted workspace: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCmd(t, "-db", db, "workspace", "delete"); r.code != exitUsage {
		t.Errorf("workspace delete without a slug: exit %d, want a usage error", r.code)
	}

	mustRun(t, "-db", db, "workspace", "create", "acme")
	svc := openDB(t, db)
	ctx := context.Background()
	if _, err := svc.VerifyAPIKey(ctx, key); !errors.Is(err, identity.ErrUnauthenticated) {
		t.Errorf("the deleted workspace's key: %v, want unauthenticated", err)
	}
	ws, err := svc.GetWorkspace(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if list, err := ws.ListUsers(ctx, "", nil); err != nil || list.Total != 0 {
		t.Errorf("ListUsers of the workspace made again = %+v, %v; want none", list, err)
	}
	if clients, err := ws.ListClients(ctx); err != nil || len(clients) != 0 {
		t.Errorf("Clients of the workspace made again = %+v, %v; want none", clients, err)
	}
}
