package identity_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/memstore"
)

// newExample returns a Service over an in-memory store, with cheap password
// hashing as examples and tests use, and its workspace "acme".
func newExample() (*identity.Service, *identity.Workspace) {
	svc, err := identity.New(memstore.New(), &identity.Options{
		PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1},
	})
	if err != nil {
		log.Fatal(err)
	}
	ws, err := svc.CreateWorkspace(context.Background(), "acme", nil)
	if err != nil {
		log.Fatal(err)
	}
	return svc, ws
}

func newExampleWorkspace() *identity.Workspace {
	_, ws := newExample()
	return ws
}

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "identity-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	svc, err := identity.Open(filepath.Join(dir, "identity.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	ws, err := svc.CreateWorkspace(context.Background(), "acme", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ws.Slug())
	// Output: acme
}

func ExampleWorkspace_CreateUser() {
	ctx := context.Background()
	ws := newExampleWorkspace()
	u, err := ws.CreateUser(ctx, identity.NewUser{
		Username: "ada",
		Email:    "ada@example.com",
		FullName: "Ada Lovelace",
		Password: "analytical engine",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.ID, u.Username, u.Enabled, u.EmailVerified)

	_, err = ws.CreateUser(ctx, identity.NewUser{
		Username: "ADA", Email: "other@example.com", FullName: "Impostor", Password: "analytical engine",
	})
	fmt.Println(errors.Is(err, identity.ErrConflict))
	// Output:
	// 1 ada true false
	// true
}

func ExampleWorkspace_CreateUser_validation() {
	ws := newExampleWorkspace()
	_, err := ws.CreateUser(context.Background(), identity.NewUser{
		Username: "not valid", Email: "ada@example.com", FullName: "Ada", Password: "abc",
	})
	var e *identity.Error
	if errors.As(err, &e) {
		for _, f := range e.Fields {
			fmt.Println(f.Field, f.Rule)
		}
	}
	// Output:
	// username pattern
	// password password_min_length
}

func ExampleWorkspace_ListUsers() {
	ctx := context.Background()
	ws := newExampleWorkspace()
	for _, name := range []string{"alice", "albert", "bob"} {
		_, err := ws.CreateUser(ctx, identity.NewUser{
			Username: name, Email: name + "@example.com", FullName: name, Password: "long enough",
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	page, err := ws.ListUsers(ctx, "AL", &identity.Page{Offset: 0, Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(page.Total, page.Items[0].Username)
	// Output: 2 alice
}

func ExampleWorkspace_GetClaims() {
	ctx := context.Background()
	ws := newExampleWorkspace()
	u, err := ws.CreateUser(ctx, identity.NewUser{
		Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Password: "analytical engine",
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := ws.SetAttribute(ctx, u.ID, "department", "mathematics", nil); err != nil {
		log.Fatal(err)
	}
	// Access tokens only (the default), and both kinds.
	if _, err := ws.SetClaimMapper(ctx, "department", identity.ClaimMapperSpec{ClaimName: "dept"}); err != nil {
		log.Fatal(err)
	}
	both := true
	if _, err := ws.SetAttribute(ctx, u.ID, "tier", "gold", nil); err != nil {
		log.Fatal(err)
	}
	if _, err := ws.SetClaimMapper(ctx, "tier", identity.ClaimMapperSpec{ClaimName: "tier", IncludeInID: &both}); err != nil {
		log.Fatal(err)
	}
	access, _ := ws.GetClaims(ctx, u.ID, identity.AccessToken)
	id, _ := ws.GetClaims(ctx, u.ID, identity.IDToken)
	fmt.Println(access)
	fmt.Println(id)
	// Output:
	// map[dept:mathematics tier:gold]
	// map[tier:gold]
}

func ExampleWorkspace_SetClaimMapper_reserved() {
	ws := newExampleWorkspace()
	_, err := ws.SetClaimMapper(context.Background(), "uid", identity.ClaimMapperSpec{ClaimName: "sub"})
	fmt.Println(identity.ErrorCode(err))
	// Output: reserved_claim
}

func ExampleWorkspace_CreateWebhook() {
	ws := newExampleWorkspace()
	created, err := ws.CreateWebhook(context.Background(), identity.NewWebhook{
		URL:    "https://hooks.example.com/identity",
		Events: []string{"user.created", "login.failed"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(created.Endpoint.ID, created.Endpoint.Enabled, created.Secret[:6])

	_, err = ws.CreateWebhook(context.Background(), identity.NewWebhook{
		URL: "https://hooks.example.com/identity", Events: []string{"user.created", "user.exploded"},
	})
	fmt.Println(err)
	// Output:
	// 1 true whsec_
	// identity: unknown event types: user.exploded (events[1]: unknown event type "user.exploded")
}

func ExampleService_AuthorizeAPIKey() {
	ctx := context.Background()
	svc, ws := newExample()
	created, err := ws.CreateAPIKey(ctx, "reporting", []identity.Scope{identity.ScopeUsersRead})
	if err != nil {
		log.Fatal(err)
	}
	key := created.Secret
	if a, err := svc.AuthorizeAPIKey(ctx, key, "acme", identity.ScopeUsersRead); err == nil {
		fmt.Println("users:read granted to", a.Key.Name, "in", a.Workspace.Slug())
	}
	_, err = svc.AuthorizeAPIKey(ctx, key, "acme", identity.ScopeUsersWrite)
	var e *identity.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, e.Scope)
	}
	// Output:
	// users:read granted to reporting in acme
	// forbidden users:write
}

func ExampleIfVersion() {
	ctx := context.Background()
	ws := newExampleWorkspace()
	read, err := ws.CreateUser(ctx, identity.NewUser{
		Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Password: "analytical engine",
	})
	if err != nil {
		log.Fatal(err)
	}
	// Two writers read the same version; only the first write happens.
	for _, name := range []string{"Ada King", "Countess of Lovelace"} {
		_, err := ws.UpdateUser(ctx, read.ID, identity.UserUpdate{
			Email: read.Email, FullName: name, Precondition: identity.IfVersion(read.Version),
		})
		fmt.Println(name, errors.Is(err, identity.ErrPreconditionFailed))
	}
	// Output:
	// Ada King false
	// Countess of Lovelace true
}

func ExampleIdempotency() {
	ctx := context.Background()
	ws := newExampleWorkspace()
	nu := identity.NewUser{
		Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Password: "analytical engine",
		// The same key and fingerprint on every retry of this one request.
		Idempotency: &identity.Idempotency{Scope: "importer", Key: "signup-7f3a", Fingerprint: []byte("request 7f3a")},
	}
	first, err := ws.CreateUser(ctx, nu)
	if err != nil {
		log.Fatal(err)
	}
	retry, err := ws.CreateUser(ctx, nu) // the first response was lost
	if err != nil {
		log.Fatal(err)
	}
	list, _ := ws.ListUsers(ctx, "", nil)
	fmt.Println(first.ID, retry.ID, list.Total)
	// Output: 1 1 1
}
