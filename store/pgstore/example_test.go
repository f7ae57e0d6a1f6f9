package pgstore_test

import (
	"context"
	"log"
	"os"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/pgstore"
)

// A program whose processes share one PostgreSQL database opens the store
// with Open, which brings the schema up to date, and passes it to
// identity.New. (The example has no output to check: it needs a server.)
func ExampleOpen() {
	ctx := context.Background()
	st, err := pgstore.Open(ctx, os.Getenv("DATABASE_URL"), nil) // postgres://user:password@host/db?search_path=identity
	if err != nil {
		log.Fatal(err)
	}
	svc, err := identity.New(st, nil)
	if err != nil {
		st.Close()
		log.Fatal(err)
	}
	defer svc.Close() // closes the store
	if _, err := svc.CreateWorkspace(ctx, "acme", nil); err != nil {
		log.Fatal(err)
	}
}
