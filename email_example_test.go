package identity_test

import (
	"context"
	"fmt"
	"log"

	"github.com/identitylib/identity"
)

func ExampleWorkspace_ConfirmEmail() {
	ctx := context.Background()
	ws := newExampleWorkspace()
	err := ws.UpdateSettings(ctx, identity.Settings{
		PasswordPolicy: identity.DefaultPasswordPolicy(),
		SMTP: &identity.SMTPSettings{
			Host: "smtp.example.com", Port: 587, From: "noreply@example.com",
			VerifyURL: "https://app.example.com/verify?token={token}",
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	u, err := ws.CreateUser(ctx, identity.NewUser{
		Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace", Password: "analytical engine",
	})
	if err != nil {
		log.Fatal(err)
	}
	// The verification email is queued with the user; a dispatcher
	// (delivery.Start) sends it.
	jobs, err := ws.ListEmailJobs(ctx, nil) // the first page of 20
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(jobs.Total, jobs.Items[0].Status, jobs.Items[0].UserID == u.ID, u.EmailVerified)

	// The page behind VerifyURL passes the link's token to ConfirmEmail.
	_, err = ws.ConfirmEmail(ctx, "idv_from-an-old-bookmark")
	fmt.Println(identity.ErrorCode(err))
	// Output:
	// 1 pending true false
	// token_invalid
}
