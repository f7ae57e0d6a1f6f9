// Command quickstart shows the library in-process: it opens a bbolt file in
// a temporary directory, creates a workspace, a user, attributes and claim
// mappers, checks the user's password and prints the claims of an access
// token and of an ID token.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/identitylib/identity"
)

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "identity-quickstart")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	path := filepath.Join(dir, "identity.db")
	svc, err := identity.Open(path, nil)
	if err != nil {
		return err
	}
	defer svc.Close()
	fmt.Println("database:", path)

	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		return err
	}
	user, err := ws.CreateUser(ctx, identity.NewUser{
		Username: "ada",
		Email:    "ada@example.com",
		FullName: "Ada Lovelace",
		Password: "analytical engine",
	})
	if err != nil {
		return err
	}
	fmt.Printf("created user %d (%s)\n", user.ID, user.Username)

	attributes := map[string]string{"department": "mathematics", "employee_id": "E-1815", "tier": "gold"}
	for key, value := range attributes {
		if _, err := ws.SetAttribute(ctx, user.ID, key, value, nil); err != nil {
			return err
		}
	}
	yes, no := true, false
	mappers := map[string]identity.ClaimMapperSpec{
		"department":  {ClaimName: "dept"},                                              // access tokens only (default)
		"employee_id": {ClaimName: "employee", IncludeInAccess: &no, IncludeInID: &yes}, // ID tokens only
		"tier":        {ClaimName: "tier", IncludeInID: &yes},                           // both
	}
	for key, spec := range mappers {
		if _, err := ws.SetClaimMapper(ctx, key, spec); err != nil {
			return err
		}
	}

	// A reserved claim is refused with a typed error.
	_, err = ws.SetClaimMapper(ctx, "department", identity.ClaimMapperSpec{ClaimName: "sub"})
	fmt.Println("mapping to \"sub\":", identity.ErrorCode(err))

	// A token issuer authenticates the user, then asks for the claims.
	if _, err := ws.Authenticate(ctx, "ada@example.com", "analytical engine"); err != nil {
		return err
	}
	for _, kind := range []identity.TokenKind{identity.AccessToken, identity.IDToken} {
		claims, err := ws.GetClaims(ctx, user.ID, kind)
		if err != nil {
			return err
		}
		out, _ := json.Marshal(claims)
		fmt.Printf("%s token claims: %s\n", kind, out)
	}
	return nil
}
