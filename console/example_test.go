package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/console"
	"github.com/identitylib/identity/jws"
	"github.com/identitylib/identity/oidc"
	"github.com/identitylib/identity/store/memstore"
)

// A program mounts the console next to the OpenID Provider its operators
// sign in with, here under /admin/, prepares the operator workspace and
// invites the first operator.
func ExampleNew() {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()

	svc, err := identity.New(memstore.New(), &identity.Options{IssuerBase: srv.URL, TokenSigner: jws.Signer{}})
	if err != nil {
		panic(err)
	}
	provider, err := oidc.New(svc, nil)
	if err != nil {
		panic(err)
	}
	h, err := console.New(svc, &console.Options{BasePath: "/admin/"})
	if err != nil {
		panic(err)
	}
	if err := h.Prepare(ctx); err != nil { // the workspace "operators", the console's client and roles
		panic(err)
	}
	mux.Handle("/t/", provider)
	mux.Handle(h.BasePath(), h)

	if ok, _ := h.HasOperator(ctx); !ok {
		link, err := h.Invite(ctx, "", console.RoleAdmin) // the first operator chooses their username
		if err != nil {
			panic(err)
		}
		fmt.Println(strings.HasPrefix(link, srv.URL+"/admin/setup?token="))
	}

	// A browser without a session is sent to the sign-in, which the
	// provider of the workspace "operators" serves.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(srv.URL + "/admin/login")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.TrimPrefix(strings.Split(resp.Header.Get("Location"), "?")[0], srv.URL))
	// Output:
	// true
	// 303 /t/operators/authorize
}
