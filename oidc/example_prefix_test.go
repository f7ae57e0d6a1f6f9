package oidc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/identitylib/identity"
	"github.com/identitylib/identity/jws"
	"github.com/identitylib/identity/oidc"
	"github.com/identitylib/identity/store/memstore"
)

// A program that serves the provider under a prefix of its own ("/auth")
// says so in the issuer base, and mounts the handler there, stripped or
// not: the handler finds the workspace in the path's end, and builds
// every URL it publishes from the issuer.
func ExampleNew() {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()

	svc, err := identity.New(memstore.New(), &identity.Options{
		IssuerBase:  srv.URL + "/auth",
		TokenSigner: jws.Signer{},
	})
	if err != nil {
		panic(err)
	}
	if _, err := svc.CreateWorkspace(context.Background(), "acme", nil); err != nil {
		panic(err)
	}
	provider, err := oidc.New(svc, nil)
	if err != nil {
		panic(err)
	}
	mux.Handle("/auth/", http.StripPrefix("/auth", provider))

	resp, err := http.Get(srv.URL + "/auth/t/acme/.well-known/openid-configuration")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var config struct {
		Issuer                string `json:"issuer"`
		AuthorizationEndpoint string `json:"authorization_endpoint"`
		JWKSURI               string `json:"jwks_uri"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&config); err != nil {
		panic(err)
	}
	for _, u := range []string{config.Issuer, config.AuthorizationEndpoint, config.JWKSURI} {
		fmt.Println(strings.TrimPrefix(u, srv.URL))
	}
	// Output:
	// /auth/t/acme
	// /auth/t/acme/authorize
	// /auth/t/acme/keys
}
