// Command readme is the README's example, whole: its function run is the
// README's Go block, line for line, and examples/identityd's
// TestDocsReadmeExample checks that and runs it. It opens a bbolt file in a temporary directory, creates a user
// with an attribute and a claim mapper, signs the user in and prints the
// claims of an access token:
//
//	ada map[dept:mathematics]
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/identitylib/identity"
)

func main() {
	dir, err := os.MkdirTemp("", "identity-readme")
	if err != nil {
		log.Fatal(err)
	}
	err = run(context.Background(), filepath.Join(dir, "identity.db"))
	os.RemoveAll(dir)
	if err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, path string) error {
	svc, err := identity.Open(path, nil) // a bbolt file; identity.New takes any store
	if err != nil {
		return err
	}
	defer svc.Close()

	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		return err
	}
	u, err := ws.CreateUser(ctx, identity.NewUser{
		Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Password: "analytical engine",
	})
	if err != nil {
		return err
	}
	if _, err := ws.SetAttribute(ctx, u.ID, "department", "mathematics", nil); err != nil {
		return err
	}
	mapper := identity.ClaimMapperSpec{ClaimName: "dept"} // into access tokens
	if _, err := ws.SetClaimMapper(ctx, "department", mapper); err != nil {
		return err
	}

	s, err := ws.Login(ctx, "ada", "analytical engine") // s.User, s.Session, s.Secret
	if err != nil {
		return err
	}
	claims, err := ws.GetClaims(ctx, s.User.ID, identity.AccessToken)
	if err != nil {
		return err
	}
	fmt.Println(s.User.Username, claims) // ada map[dept:mathematics]
	return nil
}
