package identity_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/store/memstore"
)

// A passkey registered, then a discoverable sign-in with it. A program
// gives Options.PasskeyCeremony: webauthn.New(); this example's ceremony
// is the tests' fake, whose "browser" answers in plain JSON, so that the
// example runs without an authenticator. A page hands Options to
// navigator.credentials.create (or .get) and posts the browser's response
// back with State.
func Example_passkeys() {
	ctx := context.Background()
	svc, err := identity.New(memstore.New(), &identity.Options{
		IssuerBase:      "https://id.example.com",
		PasskeyCeremony: fakeCeremony{},
	})
	if err != nil {
		panic(err)
	}
	defer svc.Close()
	ws, err := svc.CreateWorkspace(ctx, "acme", nil)
	if err != nil {
		panic(err)
	}
	ada, err := ws.CreateUser(ctx, identity.NewUser{Username: "ada", Email: "ada@example.com", FullName: "Ada Lovelace",
		Password: "analytical engine"})
	if err != nil {
		panic(err)
	}

	// Registration: the options go to the browser, its response comes back.
	reg, err := ws.BeginPasskeyRegistration(ctx, ada.ID)
	if err != nil {
		panic(err)
	}
	var opts fakeOptions
	_ = json.Unmarshal(reg.Options, &opts)
	fmt.Println("relying party:", opts.RPID)
	browser := goodResponse(opts, []byte{1, 2, 3})
	resp, _ := json.Marshal(browser)
	p, err := ws.ConfirmPasskeyRegistration(ctx, ada.ID, reg.State, resp, "Laptop")
	if err != nil {
		panic(err)
	}
	fmt.Println("registered:", p.ID, p.Name, p.AuthenticatorName)

	// A discoverable sign-in: no username asked for.
	in, err := ws.BeginPasskeySignIn(ctx, nil)
	if err != nil {
		panic(err)
	}
	_ = json.Unmarshal(in.Options, &opts)
	browser.Challenge = opts.Challenge
	resp, _ = json.Marshal(browser)
	v, err := ws.VerifyPasskeySignIn(ctx, in.State, resp)
	if err != nil {
		panic(err)
	}
	fmt.Println("signed in:", v.User.Username, v.AMR)
	s, err := ws.CreateSession(ctx, v.User.ID, v.SessionOptions())
	if err != nil {
		panic(err)
	}
	fmt.Println("session amr:", s.Session.AMR)

	// The state is single-use.
	_, err = ws.VerifyPasskeySignIn(ctx, in.State, resp)
	fmt.Println("again:", identity.ErrorCode(err))
	// Output:
	// relying party: id.example.com
	// registered: AQID Laptop iCloud Keychain
	// signed in: ada [swk user mfa]
	// session amr: [swk user mfa]
	// again: token_used
}
