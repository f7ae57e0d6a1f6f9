package identity_test

import (
	"context"
	"fmt"
	"log"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/jws"
	"github.com/identitylib/identity/store/memstore"
)

// newTokenExample returns workspace "acme" of a Service that issues
// tokens, with a user ada whose department a claim mapper puts in access
// tokens, and a client "Reports".
func newTokenExample() (ws *identity.Workspace, ada identity.User, client identity.OAuthClient) {
	ctx := context.Background()
	svc, err := identity.New(memstore.New(), &identity.Options{
		IssuerBase:       "https://id.example.com",
		TokenSigner:      jws.Signer{},
		SigningAlgorithm: identity.ES256,
		PasswordHashing:  &identity.Argon2Params{Memory: 64, Time: 1, Threads: 1}, // fast, for the example
	})
	if err != nil {
		log.Fatal(err)
	}
	if ws, err = svc.CreateWorkspace(ctx, "acme", nil); err != nil {
		log.Fatal(err)
	}
	ada, err = ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com",
		FullName: "Ada Lovelace", Password: "correct horse battery"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := ws.SetAttribute(ctx, ada.ID, "department", "engineering", nil); err != nil {
		log.Fatal(err)
	}
	if _, err := ws.SetClaimMapper(ctx, "department", identity.ClaimMapperSpec{ClaimName: "dept"}); err != nil {
		log.Fatal(err)
	}
	created, err := ws.CreateClient(ctx, identity.NewClient{Name: "Reports", RedirectURIs: []string{"https://reports.example.com/cb"}})
	if err != nil {
		log.Fatal(err)
	}
	return ws, ada, created.Client
}

// A program that signs its users in itself issues them tokens for one of
// the workspace's clients: an access token with the mapped claims, an ID
// token with the openid scope, and a refresh token.
func ExampleWorkspace_IssueTokens() {
	ctx := context.Background()
	ws, ada, client := newTokenExample()
	if _, err := ws.Authenticate(ctx, "ada", "correct horse battery"); err != nil {
		log.Fatal(err)
	}
	tok, err := ws.IssueTokens(ctx, identity.TokenRequest{ClientID: client.ID, UserID: ada.ID, Scopes: []string{"openid", "email", "offline_access"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tok.TokenType, tok.Scopes)
	fmt.Println(tok.AccessToken != "", tok.IDToken != "", tok.RefreshToken != "")
	// Output:
	// Bearer [openid email]
	// true true true
}

// A program that is its own resource server checks the access tokens it
// receives: signature, issuer, lifetime, and that the grant still stands.
func ExampleWorkspace_VerifyAccessToken() {
	ctx := context.Background()
	ws, ada, client := newTokenExample()
	tok, err := ws.IssueTokens(ctx, identity.TokenRequest{ClientID: client.ID, UserID: ada.ID, Scopes: []string{"openid"}})
	if err != nil {
		log.Fatal(err)
	}
	at, err := ws.VerifyAccessToken(ctx, tok.AccessToken)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(at.Subject, at.ClientID == client.ID, at.HasScope("openid"), at.Claims["dept"])

	// A disabled user's tokens stop working at once.
	if err := ws.DisableUser(ctx, ada.ID); err != nil {
		log.Fatal(err)
	}
	_, err = ws.VerifyAccessToken(ctx, tok.AccessToken)
	fmt.Println(identity.ErrorCode(err))
	// Output:
	// 1 true true engineering
	// unauthenticated
}
