// Command genold writes a bbolt file with the previous release: workspace
// acme with SMTP settings, a webhook endpoint for user.created, and one
// user, which queues a webhook delivery and a verification mail job.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/identitylib/identity"
)

func main() {
	path := os.Args[1]
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	svc, err := identity.Open(path, &identity.Options{
		Now:                  func() time.Time { return now },
		AllowPrivateWebhooks: true,
		PasswordHashing:      &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	ctx := context.Background()
	settings := identity.DefaultSettings()
	settings.SMTP = &identity.SMTPSettings{
		Host: "127.0.0.1", Port: 2525, TLS: identity.SMTPNoTLS,
		From: "noreply@acme.example", VerifyURL: "http://127.0.0.1/verify?token={token}",
	}
	ws, err := svc.CreateWorkspace(ctx, "acme", &settings)
	if err != nil {
		log.Fatal(err)
	}
	hook, err := ws.CreateWebhook(ctx, identity.NewWebhook{URL: "https://127.0.0.1:9/hook", Events: []string{"user.created"}})
	if err != nil {
		log.Fatal(err)
	}
	u, err := ws.CreateUser(ctx, identity.NewUser{Username: "alice", Email: "alice@acme.example", FullName: "Alice Liddell", Password: "correct horse battery staple"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("endpoint %d, user %d\n", hook.Endpoint.ID, u.ID)
}
