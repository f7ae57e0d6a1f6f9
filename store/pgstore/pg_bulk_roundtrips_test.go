package pgstore_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/pgstore"
	"github.com/identitylib/identity/store/pgstore/pgtest"
)

// TestRoundTrips counts the messages the client sends for each call of
// the library, once the statements are prepared on the connection: one
// message is one round trip, but for COPY. A View of one statement is
// one: its BEGIN goes with the statement, and its ROLLBACK with the next
// transaction's first statement. ImportUsers of 10 users costs what
// ImportUsers of 1 costs.
func TestRoundTrips(t *testing.T) {
	ctx := t.Context()
	// One connection, so that every call finds the statements it sends
	// prepared by the warm-up.
	s, writes, err := pgstore.OpenCounting(ctx, pgtest.URL(t), &pgstore.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	svc, err := identity.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	batch := func(n int) []identity.ImportedUser {
		users := benchPGBatch(next, n, true)
		for i := range users {
			users[i].Roles = []identity.RoleRef{identity.RoleName("staff"), identity.RoleName("auditor")}
			users[i].Groups = []string{"eng"}
		}
		next += n
		return users
	}
	if _, err := ws.SetClaimMapper(ctx, "tier", identity.ClaimMapperSpec{ClaimName: "tier"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.ImportUsers(ctx, batch(1)); err != nil {
		t.Fatal(err)
	}

	calls := []struct {
		name string
		call func(context.Context) error
	}{
		{"GetUser", func(ctx context.Context) error { _, err := ws.GetUser(ctx, 1); return err }},
		{"Claims", func(ctx context.Context) error { _, err := ws.GetClaims(ctx, 1, identity.AccessToken); return err }},
		{"GetUser of no user", func(ctx context.Context) error {
			if _, err := ws.GetUser(ctx, 1<<40); identity.ErrorCode(err) != identity.CodeNotFound {
				return err
			}
			return nil
		}},
		{"Attributes", func(ctx context.Context) error { _, err := ws.ListAttributes(ctx, 1); return err }},
		{"SetAttribute", func(ctx context.Context) error { _, err := ws.SetAttribute(ctx, 1, "tier", "silver", nil); return err }},
		{"ImportUsers of 1", func(ctx context.Context) error { _, err := ws.ImportUsers(ctx, batch(1)); return err }},
		{"ImportUsers of 10", func(ctx context.Context) error { _, err := ws.ImportUsers(ctx, batch(10)); return err }},
	}
	// Prepare every statement on the connection.
	for _, c := range calls {
		if err := c.call(ctx); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	got := map[string]int64{}
	for _, c := range calls {
		before := writes.Load()
		if err := c.call(ctx); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got[c.name] = writes.Load() - before
	}
	want := map[string]int64{
		// BEGIN and the user's row.
		"GetUser": 1,
		// BEGIN and the user with its attributes and the mappers.
		"Claims": 1,
		// BEGIN and the user's row, and then whether the workspace exists.
		"GetUser of no user": 2,
		// BEGIN and the user's attributes (the user's row only when it
		// has none).
		"Attributes": 1,
		// BEGIN, the gate, the user and its attributes; the attribute,
		// deferred, and COMMIT.
		"SetAttribute": 2,
		// BEGIN, the gate and which names are taken; the workspace;
		// the id of each of the two role names and of the group name;
		// the first id; for each of users, user_attributes, user_roles
		// and group_members a COPY, in three messages (the statement,
		// the rows, the end) and one round trip; the holders, the
		// counts and COMMIT.
		"ImportUsers of 1":  19,
		"ImportUsers of 10": 19,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trips per call (-want +got):\n%s", diff)
	}
}
