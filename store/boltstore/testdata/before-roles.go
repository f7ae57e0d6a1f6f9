// Command genroles writes a bbolt file with the release before roles were
// records (commit df1e9e1): workspace acme with three users, role ids
// assigned to two of them (ada: 3 and 7; bob: 7; carol: none), and one
// OAuth client, then compacts it.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/boltstore"
)

func main() {
	path := os.Args[1]
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	svc, err := identity.Open(path, &identity.Options{
		Now:             func() time.Time { return now },
		PasswordHashing: &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1},
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		log.Fatal(err)
	}
	roles := map[string][]int64{"ada": {3, 7}, "bob": {7}, "carol": nil}
	for _, name := range []string{"ada", "bob", "carol"} {
		u, err := ws.CreateUser(ctx, identity.NewUser{Username: name, Email: name + "@acme.example", FullName: name + " Example", Password: "correct horse battery staple"})
		if err != nil {
			log.Fatal(err)
		}
		for _, r := range roles[name] {
			if err := ws.AssignRole(ctx, u.ID, r); err != nil {
				log.Fatal(err)
			}
		}
		fmt.Printf("user %d %s: roles %v\n", u.ID, name, roles[name])
	}
	c, err := ws.CreateClient(ctx, identity.NewClient{Name: "app", Public: true, RedirectURIs: []string{"https://app.example/cb"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("client %s\n", c.Client.ID)
	if err := svc.Close(); err != nil {
		log.Fatal(err)
	}
	res, err := boltstore.Compact(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("compacted: %d -> %d bytes\n", res.Before, res.After)
}
